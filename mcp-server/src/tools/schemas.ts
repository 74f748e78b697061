import { IdSchema, TaskStateSchema } from '@ag2net/protocol';
import { z } from 'zod';

/**
 * The inputs of the network tools. Every string and list is bounded so that a hostile or confused caller is refused
 * here (`invalid_request`), before anything reaches the hub; unknown keys are refused too.
 */

/** The longest text `say` and `delegate` send, in characters (an envelope is at most 256 KiB on the wire). */
export const MAX_MESSAGE_CHARS = 100_000;
/** The longest name or search text, in characters (the hub's own query bound). */
export const MAX_QUERY_CHARS = 256;
/** The longest `delegate` wait, in seconds. */
export const MAX_DELEGATE_TIMEOUT_S = 600;
/** How long `delegate` waits by default, in seconds. */
export const DEFAULT_DELEGATE_TIMEOUT_S = 120;

const ChannelId = IdSchema.describe('A channel id, as `channels` lists them.');
const NameOrId = z.string().min(1).max(MAX_QUERY_CHARS).describe('An agent name or agent id.');

export const SayInputSchema = z.strictObject({
  channel_id: ChannelId,
  text: z.string().min(1).max(MAX_MESSAGE_CHARS).describe('The message.'),
  audience: z
    .array(NameOrId)
    .min(1)
    .max(64)
    .optional()
    .describe('Only these participants see it (names or ids); default everyone in the channel.'),
});

export const DelegateInputSchema = z.strictObject({
  target: NameOrId.describe('The agent to consult: its name or agent id.'),
  prompt: z.string().min(1).max(MAX_MESSAGE_CHARS).describe('The question or request.'),
  capability: z.string().min(1).max(MAX_QUERY_CHARS).optional().describe('A capability tag, kept on the channel.'),
  timeout_s: z
    .number()
    .min(1)
    .max(MAX_DELEGATE_TIMEOUT_S)
    .optional()
    .describe(`Seconds to wait for the answer; default ${DEFAULT_DELEGATE_TIMEOUT_S}.`),
});

export const PeersInputSchema = z.strictObject({
  action: z.enum(['find', 'describe']).default('find'),
  query: z
    .string()
    .max(MAX_QUERY_CHARS)
    .optional()
    .describe('find: text to find (any case) in names and resume summaries.'),
  capability: z.string().max(MAX_QUERY_CHARS).optional().describe('find: only agents claiming this capability.'),
  kind: z.enum(['agent', 'human', 'remote_agent']).optional().describe('find: only identities of this kind.'),
  name: NameOrId.optional().describe('describe: the agent (name or id).'),
  limit: z.number().int().min(1).max(100).default(20).describe('find: at most this many.'),
});

export const ChannelsInputSchema = z.strictObject({
  action: z
    .enum(['list', 'open', 'close'])
    .default('list')
    .describe('list (default) my channels; open a new one; close one of mine.'),
  state: z
    .enum(['active', 'pending', 'closed', 'expired', 'all'])
    .default('active')
    .describe('list: only channels in this state; `all` for every state.'),
  channel_id: ChannelId.optional().describe('list: only this channel. close: the channel to close.'),
  limit: z.number().int().min(1).max(100).default(50).describe('list: at most this many.'),
  type: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .describe('open: consulting (one question, one answer), conversation, discussion or workflow.'),
  target: z
    .union([NameOrId, z.array(NameOrId).min(1).max(16)])
    .optional()
    .describe('open: who to invite (names or ids).'),
  intent: z.string().max(1024).optional().describe('open: what the channel is for.'),
  message: z.string().min(1).max(MAX_MESSAGE_CHARS).optional().describe('open: a first message, sent once it is open.'),
  reason: z.string().max(256).optional().describe('close: why.'),
});

export const TasksInputSchema = z.strictObject({
  action: z.enum(['list', 'get']).default('list'),
  task_id: IdSchema.optional().describe('get: the task.'),
  scope: z.enum(['own', 'all']).default('own').describe('list: my tasks, or every task I may see.'),
  channel_id: ChannelId.optional().describe("list: only this channel's tasks."),
  state: TaskStateSchema.optional().describe('list: only tasks in this state.'),
  limit: z.number().int().min(1).max(100).default(20),
});

export const ContextInputSchema = z.strictObject({
  channel_id: ChannelId,
  limit: z.number().int().min(1).max(200).default(50).describe('The last this many envelopes.'),
  query: z.string().min(1).max(MAX_QUERY_CHARS).optional().describe('Only envelopes whose text holds this (any case).'),
  speaker: NameOrId.optional().describe('Only envelopes of this sender (name or id).'),
});

export const InboxInputSchema = z.strictObject({
  limit: z.number().int().min(1).max(100).default(20).describe('At most this many envelopes, oldest first.'),
  channel_id: ChannelId.optional().describe('Only this channel; the others stay unread.'),
});
