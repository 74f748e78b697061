import { z } from 'zod';
import {
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_EXPIRED,
  EV_CHANNEL_INVITE,
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_INVITE_REJECT,
  EV_CHANNEL_OPENED,
  EV_CONTEXT_SET,
  EV_EXPECTATION_VIOLATED,
  EV_PACKET,
  EV_TASK_CANCEL_REQUEST,
  EV_TASK_CANCELLED,
  EV_TEXT,
  EV_TURN_FAILED,
} from './events.js';
import { TimestampSchema } from './envelope.js';
import { IdSchema } from './ids.js';
import { MAX_PARTS, PartSchema } from './parts.js';

/** The longest turn a `TurnReport` states, in ms (one day); a longer one is reported as this. */
export const MAX_TURN_REPORT_DURATION_MS = 86_400_000;
/** The most tokens a `TurnReport` states for either side; more are reported as this. */
export const MAX_TURN_REPORT_TOKENS = 1_000_000_000;
/** The most model attempts, retries or tool calls a `TurnReport` states; more are reported as this. */
export const MAX_TURN_REPORT_COUNT = 1000;

/** Tokens a turn's model calls used, summed over the turn, as the provider reported them. */
const TurnUsageSchema = z
  .looseObject({
    input_tokens: z
      .number()
      .int()
      .min(0)
      .max(MAX_TURN_REPORT_TOKENS)
      .describe('Tokens the model read (prompts, history, tool results), over every call of the turn.'),
    output_tokens: z
      .number()
      .int()
      .min(0)
      .max(MAX_TURN_REPORT_TOKENS)
      .describe('Tokens the model wrote (text and tool calls), over every call of the turn.'),
  })
  .describe('Tokens the turn used, as the provider reported them; absent when it reported none.');

/**
 * How an agent's turn went, as its runtime measured it: `event_data.turn` of the answer the turn posted
 * (`ag2.msg.text`, or `ag2.packet` in a workflow). For people and dashboards: when the turn started and how long it
 * took, which model answered, the tokens it used, how many times it was asked (retries included) and how many tools
 * it called. It never carries a prompt, a key or anything the model wrote. Every field is bounded (larger values are
 * reported as the bound); unknown fields pass through. AG2 peers, which read `text` (or `body`), ignore it.
 */
export const TurnReportSchema = z
  .looseObject({
    started_at: TimestampSchema.describe('When the agent began the turn: its trigger reached its handler (ISO 8601).'),
    duration_ms: z
      .number()
      .int()
      .min(0)
      .max(MAX_TURN_REPORT_DURATION_MS)
      .describe("From the turn's start until its answer was handed to the hub, in ms, by the agent's clock."),
    provider: z
      .string()
      .min(1)
      .max(128)
      .describe('The provider as the passport names it: `openai`, `anthropic`, `openai-compatible`, `scripted`, …'),
    model: z.string().min(1).max(256).describe('The model id, e.g. `gpt-4.1-mini`.'),
    usage: TurnUsageSchema.optional(),
    attempts: z
      .number()
      .int()
      .min(1)
      .max(MAX_TURN_REPORT_COUNT)
      .describe(
        'Requests made to the model over the turn, one per step (a tool round trip is one more), retries included.',
      ),
    retries: z
      .number()
      .int()
      .min(0)
      .max(MAX_TURN_REPORT_COUNT)
      .optional()
      .describe('Of the attempts, those that repeated a request that had failed for a transient reason.'),
    tool_calls: z
      .number()
      .int()
      .min(0)
      .max(MAX_TURN_REPORT_COUNT)
      .optional()
      .describe('Tools the model called during the turn.'),
  })
  .describe("How the agent's turn went, as its runtime measured it: timing, model, tokens, attempts, tool calls.");
export type TurnReport = z.infer<typeof TurnReportSchema>;

/**
 * `event_data` of `EV_TEXT`: the `text`; the message's `parts` when it has more than text (text and data parts, whose
 * text rendering `partsText` is then the `text`, what a reader that shows only text shows); and the sender's `turn`
 * report when an agent's runtime measured one.
 */
export const TextDataSchema = z.looseObject({
  text: z.string(),
  parts: z
    .array(PartSchema)
    .min(1)
    .max(MAX_PARTS)
    .optional()
    .describe('The message as parts (text and data); `text` is their text rendering.'),
  turn: TurnReportSchema.optional(),
});
export type TextData = z.infer<typeof TextDataSchema>;

/** Set and delete instructions for workflow context variables; `delete` runs before `set`. */
export const ContextUpdatesSchema = z.looseObject({
  set: z.record(z.string(), z.unknown()).default({}),
  delete: z.array(z.string()).default([]),
});
export type ContextUpdates = z.infer<typeof ContextUpdatesSchema>;

/** `routing` of a packet: plain text, a static or dynamic handoff, or a finish. */
export const PacketRoutingSchema = z.discriminatedUnion('kind', [
  z.looseObject({ kind: z.literal('text') }),
  z.looseObject({
    kind: z.literal('handoff'),
    tool: z.string().optional(),
    reason: z.string().optional(),
    target: z.string().optional(),
  }),
  z.looseObject({
    kind: z.literal('finish'),
    tool: z.string().optional(),
    reason: z.string().optional(),
    summary: z.string().optional(),
  }),
]);
export type PacketRouting = z.infer<typeof PacketRoutingSchema>;

/**
 * `event_data` of `EV_PACKET`. Every field is optional, as AG2's builders omit some of them; `turn` is the sender's
 * turn report (`TurnReportSchema`), which routing never reads.
 */
export const PacketDataSchema = z.looseObject({
  routing: PacketRoutingSchema.optional(),
  context_updates: ContextUpdatesSchema.optional(),
  body: z.string().optional(),
  turn: TurnReportSchema.optional(),
});
export type PacketData = z.infer<typeof PacketDataSchema>;

/** `event_data` of `EV_CHANNEL_INVITE`. */
export const InviteDataSchema = z.looseObject({
  channel_id: IdSchema,
  manifest_type: z.string(),
  manifest_version: z.number().int(),
  creator_id: IdSchema,
  knobs: z.record(z.string(), z.unknown()),
  labels: z.record(z.string(), z.string()),
});
export type InviteData = z.infer<typeof InviteDataSchema>;

/** `event_data` of `EV_CHANNEL_INVITE_ACK` and `EV_CHANNEL_OPENED`. */
export const ChannelRefDataSchema = z.looseObject({ channel_id: IdSchema.optional() });
export type ChannelRefData = z.infer<typeof ChannelRefDataSchema>;

/** `event_data` of `EV_CHANNEL_INVITE_REJECT`: free-form, usually a `reason`. */
export const InviteRejectDataSchema = z.looseObject({ reason: z.string().optional() });
export type InviteRejectData = z.infer<typeof InviteRejectDataSchema>;

/** `event_data` of `EV_CHANNEL_CLOSED` and `EV_CHANNEL_EXPIRED`. */
export const ChannelEndDataSchema = z.looseObject({ reason: z.string(), channel_id: IdSchema });
export type ChannelEndData = z.infer<typeof ChannelEndDataSchema>;

/** `event_data` of `EV_EXPECTATION_VIOLATED`. */
export const ExpectationViolatedDataSchema = z.looseObject({
  expectation: z.string(),
  violators: z.array(z.string()),
  detail: z.record(z.string(), z.unknown()),
});
export type ExpectationViolatedData = z.infer<typeof ExpectationViolatedDataSchema>;

/** `event_data` of `EV_CONTEXT_SET`. */
export const ContextSetDataSchema = ContextUpdatesSchema;
export type ContextSetData = ContextUpdates;

/** `event_data` of `EV_TASK_CANCEL_REQUEST` and `EV_TASK_CANCELLED`. */
export const TaskCancelDataSchema = z.looseObject({ task_id: z.string(), reason: z.string().default('') });
export type TaskCancelData = z.infer<typeof TaskCancelDataSchema>;

/**
 * What a failed turn met, for people and programs (`TurnFailedData.cause`): never a key, a token, URL credentials,
 * the prompt or a response body. Every field is bounded; unknown fields pass through.
 */
const TurnFailureCauseSchema = z.looseObject({
  /**
   * What happened: `timeout` (no answer within the model's timeout), `connection` (the endpoint could not be
   * reached), `http` (it answered with an HTTP error), `malformed_output` (it answered what the provider cannot read),
   * `config` (the call could not be made: no API key, a URL the client refuses), `hub` (the hub refused the turn),
   * `error` (anything else). Programs should treat an unknown kind as `error`.
   */
  kind: z.string().min(1).max(64),
  /** The error's class, e.g. `APICallError`, `LoadAPIKeyError`, `NetworkError`, `TypeError`. */
  exc_type: z.string().min(1).max(128).optional(),
  /** The HTTP status the endpoint answered, for `http`. */
  status: z.number().int().min(100).max(599).optional(),
  /**
   * The provider's error code (`invalid_api_key`, `authentication_error`), a system error code (`ECONNREFUSED`), or
   * the hub's wire code (`access_denied`).
   */
  code: z.string().min(1).max(128).optional(),
  /** A short message with secrets scrubbed, e.g. `ECONNREFUSED 127.0.0.1:9` or the provider's error message. */
  message: z.string().max(300).optional(),
});

/**
 * `event_data` of `EV_TURN_FAILED`: `agent_name` (the failing agent's passport name), `reason` (one short sentence
 * for people, e.g. `the model rejected the API key`; never the prompt or a key) and `code` (stable, for programs:
 * `model_auth`, `model_timeout`, `model_unavailable`, `model_malformed_output`, `model_rejected`, `model_error`,
 * `turn_error`). Those three are AG2's; the others are optional: `cause` (what the turn met, above), `attempts` (how
 * many times the model was called before giving up) and the `provider` and `model` that failed. Unknown fields pass
 * through.
 */
export const TurnFailedDataSchema = z.looseObject({
  agent_name: z.string(),
  reason: z.string().max(500),
  code: z.string().min(1),
  cause: TurnFailureCauseSchema.optional(),
  attempts: z.number().int().min(1).max(1000).optional(),
  /** As the agent's passport names it: `openai`, `anthropic`, `openai-compatible`, `scripted`, … */
  provider: z.string().min(1).max(128).optional(),
  /** The model id, e.g. `gpt-4.1-mini`. */
  model: z.string().min(1).max(256).optional(),
});
export type TurnFailedData = z.infer<typeof TurnFailedDataSchema>;

/**
 * A failed turn's `cause` in one line, the way logs and people read it: `401 invalid_api_key: Incorrect API key
 * provided`, `ECONNREFUSED 127.0.0.1:9` (a connection's message starts with its code already), the message alone
 * without status or code, and the `kind` when there is nothing else.
 */
export function failureCauseLine(cause: {
  readonly kind: string;
  readonly status?: number | undefined;
  readonly code?: string | undefined;
  readonly message?: string | undefined;
}): string {
  const head = [cause.status === undefined ? null : String(cause.status), cause.code ?? null]
    .filter((p): p is string => p !== null)
    .join(' ');
  const message = cause.message ?? '';
  if (head === '') return message === '' ? cause.kind : message;
  if (message === '' || message.startsWith(head)) return message === '' ? head : message;
  return `${head}: ${message}`;
}

/** The `event_data` schema of every built-in event type. Custom event types have none and pass untouched. */
export const EVENT_DATA_SCHEMAS: Readonly<Record<string, z.ZodType<Record<string, unknown>>>> = Object.freeze({
  [EV_TEXT]: TextDataSchema,
  [EV_PACKET]: PacketDataSchema,
  [EV_CHANNEL_INVITE]: InviteDataSchema,
  [EV_CHANNEL_INVITE_ACK]: ChannelRefDataSchema,
  [EV_CHANNEL_INVITE_REJECT]: InviteRejectDataSchema,
  [EV_CHANNEL_OPENED]: ChannelRefDataSchema,
  [EV_CHANNEL_CLOSED]: ChannelEndDataSchema,
  [EV_CHANNEL_EXPIRED]: ChannelEndDataSchema,
  [EV_EXPECTATION_VIOLATED]: ExpectationViolatedDataSchema,
  [EV_CONTEXT_SET]: ContextSetDataSchema,
  [EV_TASK_CANCEL_REQUEST]: TaskCancelDataSchema,
  [EV_TASK_CANCELLED]: TaskCancelDataSchema,
  [EV_TURN_FAILED]: TurnFailedDataSchema,
});
