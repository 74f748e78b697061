import { z } from 'zod';
import { ChannelMetadataSchema, ChannelStateSchema } from '../channel.js';
import { DurationSchema } from '../duration.js';
import { EnvelopeSchema, TimestampSchema } from '../envelope.js';
import { IdSchema } from '../ids.js';
import { Access } from './access.js';
import { MAX_PARTITIONS } from './partition-count.js';
import {
  Cursor,
  DEFAULT_MAX_REQUEST_BYTES,
  Empty,
  LARGE_REQUEST_BYTES,
  Limit,
  MAX_ENVELOPE_BYTES,
  NextCursor,
  Query,
} from './op-parts.js';
import { AGENT_OPS } from './agent-ops.js';
import { TASK_OPS, TURN_LOCK_OPS } from './task-ops.js';

export {
  DEFAULT_MAX_REQUEST_BYTES,
  LARGE_REQUEST_BYTES,
  LIST_PAGE_BYTES,
  MAX_ENVELOPE_BYTES,
  MAX_REQUEST_DEPTH,
} from './op-parts.js';

/** A turn the hub expects from an agent. */
export const PendingTurnSchema = z.strictObject({
  channel_id: IdSchema,
  triggering_envelope_id: IdSchema.nullable(),
  expected_at: TimestampSchema,
});
export type PendingTurn = z.infer<typeof PendingTurnSchema>;

/** What the hub reports about itself. */
export const HealthSchema = z.strictObject({
  hub_id: z.string(),
  role: z.enum(['active', 'standby']),
  epoch: z.number().int().min(0),
  active_channels: z.number().int().min(0),
  registered_agents: z.number().int().min(0),
  adapters_loaded: z.number().int().min(0),
  uptime_seconds: z.number().min(0),
  /** WAL messages and KV records this hub skipped because they were not what a hub writes. */
  quarantined: z.number().int().min(0),
  /** Deliveries this hub gave up after their retries and parked in the audit trail. */
  dead_letters: z.number().int().min(0),
  /** How many partitions the deployment's channels are spread over (`partitionOf`); absent from older hubs: 1. */
  partitions: z.number().int().min(1).max(MAX_PARTITIONS).default(1),
  /** The partitions this hub holds now, each with its lease epoch; absent from older hubs. */
  held: z
    .array(z.strictObject({ partition: z.number().int().min(0), epoch: z.number().int().min(0) }))
    .max(MAX_PARTITIONS)
    .default([]),
});
export type Health = z.infer<typeof HealthSchema>;

/**
 * The hub's answer to an admitted `post`: the envelope's id, its `sequence` in the channel and when the hub stamped
 * it. A retried post of the same envelope id gets the same ack.
 */
export const PostAckSchema = z.strictObject({
  envelope_id: IdSchema,
  sequence: z.number().int().positive(),
  created_at: TimestampSchema,
});
export type PostAck = z.infer<typeof PostAckSchema>;

/**
 * One record of the hub's audit trail: `id` (unique; a record published twice keeps its id), `kind` (an
 * `AuditKind`: `agent_registered`, `channel_closed`, `expectation_violated`, …), `at` (when it happened, hub clock)
 * and the kind's fields, AG2's names (`channel_id`, `agent_id`, `reason`, …). The set of kinds is open.
 */
export const AuditRecordSchema = z.looseObject({ id: z.string().min(1), kind: z.string().min(1), at: TimestampSchema });
export type AuditRecord = z.infer<typeof AuditRecordSchema>;

/**
 * How far the hub's delivery (its durable consumer over the WAL that fans envelopes out to inboxes) lags behind
 * admission: `pending`, WAL messages not yet handed to the hub; `ack_pending`, handed to it but not yet fanned out;
 * `oldest_pending_age_seconds`, how long ago the oldest of those was admitted (`null` when nothing pends).
 */
export const DeliveryLagSchema = z.strictObject({
  pending: z.number().int().min(0),
  ack_pending: z.number().int().min(0),
  oldest_pending_age_seconds: z.number().min(0).nullable(),
});
export type DeliveryLag = z.infer<typeof DeliveryLagSchema>;

/**
 * Every hub operation: its request and response schemas, whether the subject carries the caller's agent id
 * (`<prefix>.hub.v1.<op>.<caller_id>`) so that NATS permissions can pin a connection to its identity, who may call
 * it (`access`, see `Access`; `operatorReads`: the operator caller is accepted too and sees everything), and whether
 * it is `idempotent`: the same request applied twice has the effect of once (reads, and writes keyed by an id the
 * client chose), so a client may resend it after a timeout. A non-idempotent request is resent only when it provably
 * reached no hub (no responders). `maxRequestBytes` is the largest request body the hub reads for it; a larger one
 * is answered `invalid_request` with details `{ limit, size }` before it is parsed.
 */
export const HUB_OPS = {
  ...AGENT_OPS,
  createChannel: {
    caller: true,
    access: Access.Self,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: LARGE_REQUEST_BYTES,
    request: z.strictObject({
      /** Proposed id, so that a retried create finds the channel it already made. */
      channel_id: IdSchema.nullable().default(null),
      type: z.string().min(1).max(128),
      version: z.number().int().min(1).default(1),
      participants: z.array(IdSchema).max(256),
      ttl: DurationSchema.nullable().default(null),
      knobs: z.record(z.string(), z.unknown()).default({}),
      intent: z.string().max(4096).nullable().default(null),
      labels: z.record(z.string(), z.string()).default({}),
    }),
    response: z.strictObject({ channel: ChannelMetadataSchema }),
  },
  getChannel: {
    caller: true,
    access: Access.Participant,
    operatorReads: true,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({ channel_id: IdSchema }),
    response: z.strictObject({ channel: ChannelMetadataSchema }),
  },
  listChannels: {
    caller: true,
    access: Access.Self,
    operatorReads: true,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({
      agent_id: IdSchema.nullable().default(null),
      state: ChannelStateSchema.nullable().default(null),
      limit: Limit,
      cursor: Cursor,
    }),
    response: z.strictObject({ channels: z.array(ChannelMetadataSchema), next_cursor: NextCursor }),
  },
  closeChannel: {
    caller: true,
    access: Access.Participant,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({ channel_id: IdSchema, reason: z.string().max(256).default('') }),
    response: z.strictObject({ channel: ChannelMetadataSchema }),
  },
  post: {
    caller: true,
    access: Access.Participant,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: MAX_ENVELOPE_BYTES,
    request: EnvelopeSchema,
    response: PostAckSchema,
  },
  readWal: {
    caller: true,
    access: Access.Participant,
    operatorReads: true,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({
      channel_id: IdSchema,
      /** First sequence to return (1-based, inclusive); default 1. */
      since: z.number().int().min(1).default(1),
      /** Last sequence to return (inclusive); default the end of the log. */
      until: z.number().int().min(1).nullable().default(null),
      limit: z.number().int().min(1).max(10_000).default(1000),
    }),
    response: z.strictObject({
      envelopes: z.array(EnvelopeSchema),
      last_sequence: z.number().int().min(0),
      /**
       * The `since` that continues this read when the page stopped early (at `limit` envelopes or
       * `LIST_PAGE_BYTES`); `null` when the requested range is done.
       */
      next_since: z.number().int().min(1).nullable(),
    }),
  },
  findEnvelopeByCausation: {
    caller: true,
    access: Access.Participant,
    operatorReads: true,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({ channel_id: IdSchema, sender_id: IdSchema, causation_id: Query.min(1) }),
    response: z.strictObject({ envelope: EnvelopeSchema.nullable() }),
  },
  canSend: {
    caller: true,
    access: Access.Participant,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({ channel_id: IdSchema, event_type: Query.nullable().default(null) }),
    response: z.strictObject({ allowed: z.boolean() }),
  },
  pendingTurnsFor: {
    caller: true,
    access: Access.Self,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: Empty,
    response: z.strictObject({ turns: z.array(PendingTurnSchema) }),
  },
  adapterState: {
    caller: true,
    access: Access.Participant,
    operatorReads: true,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({ channel_id: IdSchema }),
    response: z.strictObject({ state: z.record(z.string(), z.unknown()).nullable() }),
  },
  /** How far the active hub's delivery lags behind admission (`DeliveryLag`); `null` before it ever provisioned. */
  deliveryLag: {
    caller: true,
    access: Access.Operator,
    operatorReads: true,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: Empty,
    response: z.strictObject({ delivery: DeliveryLagSchema.nullable() }),
  },
  health: {
    caller: false,
    access: Access.Public,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: Empty,
    response: HealthSchema,
  },
  ...TASK_OPS,
  /** AG2's `report_turn_failure`: the caller's turn on an envelope failed; recorded as `turn_failed`. */
  reportTurnFailure: {
    caller: true,
    access: Access.Participant,
    operatorReads: false,
    idempotent: false,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({
      channel_id: IdSchema,
      envelope_id: IdSchema,
      exc_type: z.string().max(256).default('Error'),
      exc_message: z.string().max(4096).default(''),
    }),
    response: Empty,
  },
  ...TURN_LOCK_OPS,
  /**
   * The audit trail, oldest first, filtered: `kinds` (any of; empty is all), `channel_id`, `agent_id` (records that
   * name the agent in any role), and `since` (inclusive) / `until` (exclusive) on `at`. For operators.
   */
  readAudit: {
    caller: true,
    access: Access.Operator,
    operatorReads: true,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({
      kinds: z.array(z.string().min(1).max(64)).max(64).default([]),
      channel_id: IdSchema.nullable().default(null),
      agent_id: IdSchema.nullable().default(null),
      since: TimestampSchema.nullable().default(null),
      until: TimestampSchema.nullable().default(null),
      limit: z.number().int().min(1).max(10_000).default(1000),
      cursor: Cursor,
    }),
    response: z.strictObject({ records: z.array(AuditRecordSchema), next_cursor: NextCursor }),
  },
} as const;

export type HubOp = keyof typeof HUB_OPS;
export type HubRequest<Op extends HubOp> = z.input<(typeof HUB_OPS)[Op]['request']>;
export type HubRequestParsed<Op extends HubOp> = z.output<(typeof HUB_OPS)[Op]['request']>;
export type HubResponse<Op extends HubOp> = z.output<(typeof HUB_OPS)[Op]['response']>;

/** The operation names, in a stable order. */
export const HUB_OP_NAMES = Object.keys(HUB_OPS) as readonly HubOp[];
