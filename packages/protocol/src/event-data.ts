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
import { IdSchema } from './ids.js';

/** `event_data` of `EV_TEXT`. */
export const TextDataSchema = z.looseObject({ text: z.string() });
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

/** `event_data` of `EV_PACKET`. Every field is optional, as AG2's builders omit some of them. */
export const PacketDataSchema = z.looseObject({
  routing: PacketRoutingSchema.optional(),
  context_updates: ContextUpdatesSchema.optional(),
  body: z.string().optional(),
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
