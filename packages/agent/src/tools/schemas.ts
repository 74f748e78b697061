import { z } from 'zod';

// The arguments the LLM writes for each network tool, validated before the tool runs. Optional arguments accept
// `null` too: models in strict mode send `null` for what they leave out.

export const DelegateArgsSchema = z.strictObject({
  target: z.string().min(1).describe('The peer to consult: its name (or agent_id).'),
  prompt: z.string().describe('The question or request to send.'),
  capability: z.string().nullish().describe("Optional capability tag, recorded as the channel's knob."),
  timeout: z.number().positive().nullish().describe('Seconds to wait for the reply (default 300).'),
});

export const PeersArgsSchema = z.strictObject({
  action: z.enum(['find', 'describe']),
  query: z.string().nullish().describe('find: text to match in names and resumes.'),
  capability: z.string().nullish().describe('find: only peers claiming this capability.'),
  sort_by: z.enum(['name', 'cost', 'track_record']).nullish(),
  name: z.string().nullish().describe('describe: the peer name (or agent_id).'),
  limit: z.number().int().min(1).max(1000).nullish().describe('find: at most this many (default 20).'),
});

export const ChannelsArgsSchema = z.strictObject({
  action: z.enum(['list', 'open', 'info', 'close']),
  type: z.string().nullish().describe('open: consulting, conversation, discussion or workflow.'),
  target: z
    .union([z.string(), z.array(z.string())])
    .nullish()
    .describe('open: who to invite (names).'),
  knobs: z.record(z.string(), z.unknown()).nullish(),
  intent: z.string().nullish(),
  ttl: z.union([z.string(), z.number()]).nullish().describe('open: seconds, or "30m", "2h".'),
  message: z.string().nullish().describe('open: the first message, sent once the channel is open.'),
  channel_id: z.string().nullish().describe('info: required; close: default the current channel.'),
  state: z.enum(['active', 'all']).nullish().describe('list: active (default) or all.'),
});

export const TasksArgsSchema = z.strictObject({
  action: z.enum(['progress', 'complete', 'list', 'status', 'wait', 'cancel']),
  payload: z.record(z.string(), z.unknown()).nullish(),
  result: z.unknown().optional(),
  task_id: z.string().nullish(),
  reason: z.string().nullish(),
  scope: z.enum(['own', 'all']).nullish(),
  state: z.enum(['active', 'all']).nullish(),
  timeout: z.number().min(0).nullish().describe('wait: seconds (default 300).'),
  poll_interval: z.number().positive().nullish().describe('wait: seconds between checks (default 0.1).'),
  limit: z.number().int().min(1).max(250).nullish(),
});

export const ContextArgsSchema = z.strictObject({
  action: z.enum(['search', 'quote']),
  query: z.string().nullish().describe('search: case-insensitive text to find.'),
  scope: z.enum(['channel', 'knowledge']).nullish(),
  speaker: z.string().nullish().describe('quote: name or agent_id.'),
  recent_n: z.number().int().min(0).nullish().describe('quote: how many of their latest messages (default 1).'),
  limit: z.number().int().min(0).nullish().describe('search: at most this many (default 10).'),
  channel_id: z.string().nullish().describe('Default: the current channel.'),
});

export const SayArgsSchema = z.looseObject({
  content: z.string(),
  audience: z.array(z.string()).nullish(),
  channel_id: z.string().nullish(),
});
