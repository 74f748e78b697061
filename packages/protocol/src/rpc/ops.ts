import { z } from 'zod';
import { ChannelMetadataSchema, ChannelStateSchema } from '../channel.js';
import { DurationSchema } from '../duration.js';
import { EnvelopeSchema, TimestampSchema } from '../envelope.js';
import { IdSchema } from '../ids.js';
import { AuthBlockSchema, PassportKindSchema, PassportSchema, ResumeSchema } from '../identity.js';
import { RuleSchema } from '../rule.js';
import { TaskStateSchema } from '../task.js';
import { Access, IdentityReplySchema, IssuedCredentialsSchema, UserPublicKeySchema } from './access.js';
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
import { TASK_OPS, TURN_LOCK_OPS } from './task-ops.js';

export {
  DEFAULT_MAX_REQUEST_BYTES,
  LARGE_REQUEST_BYTES,
  LIST_PAGE_BYTES,
  MAX_ENVELOPE_BYTES,
  MAX_REQUEST_DEPTH,
} from './op-parts.js';

/** An agent's passport, stamped by the hub (id and registration time set). */
const AgentReply = z.strictObject({ passport: PassportSchema });

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

/** What `revokeIdentity` and `readmitIdentity` answer: the identity, its key, and when it was revoked. */
const AdmissionReply = z.strictObject({
  agent_id: IdSchema,
  name: z.string(),
  /** The nkey user public key its credentials are issued for (`null` on a hub that issues none). */
  public_key: UserPublicKeySchema.nullable(),
  /** When the operator revoked it; `null` once re-admitted. */
  revoked_at: TimestampSchema.nullable(),
});

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
  register: {
    caller: false,
    access: Access.Public,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: LARGE_REQUEST_BYTES,
    request: z.strictObject({
      passport: PassportSchema,
      resume: ResumeSchema.prefault({}),
      skill_md: z.string().max(65_536).nullable().default(null),
      rule: RuleSchema.nullable().default(null),
      /**
       * The identity's nkey user public key. A hub that issues credentials requires it and answers with a user JWT
       * for it; the identity's seed never leaves its process.
       */
      public_key: UserPublicKeySchema.nullable().default(null),
    }),
    response: IdentityReplySchema,
  },
  /**
   * Fresh credentials for an identity registered earlier, for its registered public key (an identity whose issued JWT
   * expired cannot connect to renew it). The passport's admission credential (`auth`) is checked as at `register`;
   * a public key other than the registered one is refused. Only the holder of that key's seed can use the JWT.
   */
  attach: {
    caller: false,
    access: Access.Public,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({
      name_or_id: Query.min(1),
      public_key: UserPublicKeySchema,
      auth: AuthBlockSchema.prefault({}),
    }),
    response: IdentityReplySchema,
  },
  /** A new JWT for the caller's registered public key, with a new lifetime; refused once the identity is gone. */
  renewCredentials: {
    caller: true,
    access: Access.Self,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: Empty,
    response: z.strictObject({ credentials: IssuedCredentialsSchema }),
  },
  unregister: {
    caller: true,
    access: Access.Self,
    operatorReads: false,
    idempotent: false,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: Empty,
    response: Empty,
  },
  /**
   * The operator revokes an identity until it re-admits it: every call the identity makes is refused as an unknown
   * caller's, and no credentials are issued for it (`register` and `attach` refuse its admission credential like a
   * wrong one). Its channels, inbox and registration stay. NATS keeps accepting JWTs it holds until they expire unless
   * the operator also revokes its key in the account (`ag2net creds revoke` does both, dating the account's
   * revocation at `revoked_at`). Idempotent: revoking a revoked identity answers the first revocation.
   */
  revokeIdentity: {
    caller: true,
    access: Access.Operator,
    operatorReads: true,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({ name_or_id: Query.min(1) }),
    response: AdmissionReply,
  },
  /**
   * The operator re-admits a revoked identity: its next `attach` gets credentials dated after the revocation (JWTs
   * dated at or before it stay refused, by NATS and by the hub). Idempotent.
   */
  readmitIdentity: {
    caller: true,
    access: Access.Operator,
    operatorReads: true,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({ name_or_id: Query.min(1) }),
    response: AdmissionReply,
  },
  getAgent: {
    caller: false,
    access: Access.Public,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({ name_or_id: Query.min(1) }),
    response: AgentReply,
  },
  getResume: {
    caller: false,
    access: Access.Public,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({ agent_id: IdSchema }),
    response: z.strictObject({ resume: ResumeSchema }),
  },
  getSkill: {
    caller: false,
    access: Access.Public,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({ agent_id: IdSchema }),
    response: z.strictObject({ skill_md: z.string().nullable() }),
  },
  getRule: {
    caller: false,
    access: Access.Public,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({ agent_id: IdSchema }),
    response: z.strictObject({ rule: RuleSchema }),
  },
  findAgentId: {
    caller: false,
    access: Access.Public,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({ name: Query.min(1) }),
    response: z.strictObject({ agent_id: IdSchema.nullable() }),
  },
  listAgents: {
    caller: false,
    access: Access.Public,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({
      capability: Query.nullable().default(null),
      query: Query.nullable().default(null),
      kind: PassportKindSchema.nullable().default(null),
      sort_by: z.enum(['name']).nullable().default(null),
      limit: Limit,
      cursor: Cursor,
    }),
    response: z.strictObject({ agents: z.array(PassportSchema), next_cursor: NextCursor }),
  },
  setResume: {
    caller: true,
    access: Access.Self,
    operatorReads: false,
    idempotent: false,
    maxRequestBytes: LARGE_REQUEST_BYTES,
    request: z.strictObject({ resume: ResumeSchema }),
    response: z.strictObject({ resume: ResumeSchema }),
  },
  setSkill: {
    caller: true,
    access: Access.Self,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: LARGE_REQUEST_BYTES,
    request: z.strictObject({ skill_md: z.string().max(65_536).nullable() }),
    response: Empty,
  },
  setRule: {
    caller: true,
    access: Access.Self,
    operatorReads: false,
    idempotent: false,
    maxRequestBytes: LARGE_REQUEST_BYTES,
    request: z.strictObject({ rule: RuleSchema }),
    response: z.strictObject({ rule: RuleSchema }),
  },
  recordObservation: {
    caller: true,
    access: Access.Self,
    operatorReads: false,
    idempotent: false,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({
      capability: Query.min(1),
      outcome: TaskStateSchema,
      latency_ms: z.number().min(0).nullable().default(null),
      /** Also a KV key (`observed.<task_id>`), hence an id. */
      task_id: IdSchema.nullable().default(null),
    }),
    response: z.strictObject({ resume: ResumeSchema }),
  },
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
