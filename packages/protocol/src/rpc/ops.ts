import { z } from 'zod';
import { ChannelMetadataSchema, ChannelStateSchema } from '../channel.js';
import { DurationSchema } from '../duration.js';
import { EnvelopeSchema, TimestampSchema } from '../envelope.js';
import { IdSchema } from '../ids.js';
import { AuthBlockSchema, PassportKindSchema, PassportSchema, ResumeSchema } from '../identity.js';
import { RuleSchema } from '../rule.js';
import { TaskMetadataSchema, TaskStateSchema } from '../task.js';
import {
  Access,
  IdentityReplySchema,
  IssuedCredentialsSchema,
  TurnLockHolderSchema,
  UserPublicKeySchema,
} from './access.js';

/** The largest request most operations take, in bytes of JSON: 64 KiB. */
export const DEFAULT_MAX_REQUEST_BYTES = 64 * 1024;
/** The largest request of operations that carry documents (passport and resume, rule, skill, task state): 256 KiB. */
export const LARGE_REQUEST_BYTES = 256 * 1024;
/**
 * The largest envelope `post` takes, in bytes of JSON: 256 KiB. The hub adds its stamp (sequence, creation time)
 * and WAL headers, a few hundred bytes, so a stamped envelope fits NATS's `max_payload` (1 MiB by default) with
 * room to spare; JSON re-encoding never makes an envelope larger than the request that carried it.
 */
export const MAX_ENVELOPE_BYTES = 256 * 1024;
/** How deeply a request's JSON may nest arrays and objects; deeper is refused before it is parsed. */
export const MAX_REQUEST_DEPTH = 64;
/** The most bytes of items one page of a list operation holds before it stops and hands out a cursor: 512 KiB. */
export const LIST_PAGE_BYTES = 512 * 1024;
/** The longest name, query or filter string a request may hold. */
const MAX_QUERY_CHARS = 256;

const Empty = z.strictObject({});
const Limit = z.number().int().min(1).max(1000).default(50);
/**
 * Where a list continues: the `next_cursor` of the previous page, or `null` for the first page. Opaque to
 * clients; valid for the same filter only.
 */
const Cursor = z.string().max(64).nullable().default(null);
/** The cursor of the page after this one, or `null` when this page is the last. */
const NextCursor = z.string().nullable();
const Query = z.string().max(MAX_QUERY_CHARS);

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

const TaskReply = z.strictObject({ task: TaskMetadataSchema });
const TaskRef = z.strictObject({ task_id: IdSchema });

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
    response: z.strictObject({
      envelope_id: IdSchema,
      sequence: z.number().int().positive(),
      created_at: TimestampSchema,
    }),
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
  /**
   * AG2's `observe_task`: records a task the caller owns (`owner_id` must be the caller). A new task id is checked
   * against the owner's `max_concurrent_tasks` and gets `expires_at` from `task_ttl_default` when it has none; a
   * known one is updated (state, timestamps, channel, progress merged).
   */
  observeTask: {
    caller: true,
    access: Access.Self,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: LARGE_REQUEST_BYTES,
    request: z.strictObject({ task: TaskMetadataSchema }),
    response: TaskReply,
  },
  /** AG2's `update_task`, owner only: state, progress (merged), result, error. A terminal task is left as it is. */
  updateTask: {
    caller: true,
    access: Access.Self,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: LARGE_REQUEST_BYTES,
    request: z.strictObject({
      task_id: IdSchema,
      state: TaskStateSchema.nullable().default(null),
      progress: z.record(z.string(), z.unknown()).nullable().default(null),
      result: z.unknown().optional(),
      error: z.string().max(4096).nullable().default(null),
    }),
    response: TaskReply,
  },
  /** A task its owner or a participant of its channel may see. */
  getTask: {
    caller: true,
    access: Access.Self,
    operatorReads: true,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: TaskRef,
    response: TaskReply,
  },
  /** The tasks the caller may see, filtered by owner, channel and state, in creation order. */
  listTasks: {
    caller: true,
    access: Access.Self,
    operatorReads: true,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({
      agent_id: IdSchema.nullable().default(null),
      channel_id: IdSchema.nullable().default(null),
      state: TaskStateSchema.nullable().default(null),
      limit: Limit,
      cursor: Cursor,
    }),
    response: z.strictObject({ tasks: z.array(TaskMetadataSchema), next_cursor: NextCursor }),
  },
  /** Stores the owner's checkpoint of a task (last write wins). */
  checkpointTask: {
    caller: true,
    access: Access.Self,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: LARGE_REQUEST_BYTES,
    request: z.strictObject({ task_id: IdSchema, state: z.record(z.string(), z.unknown()) }),
    response: Empty,
  },
  /** The owner's last checkpoint of a task, or `null`. */
  readTaskCheckpoint: {
    caller: true,
    access: Access.Self,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: TaskRef,
    response: z.strictObject({ state: z.record(z.string(), z.unknown()).nullable() }),
  },
  /** AG2's `fire_task_event`: a task event of the caller's runtime (e.g. `mirror_failed`) goes to the audit trail. */
  fireTaskEvent: {
    caller: true,
    access: Access.Self,
    operatorReads: false,
    idempotent: false,
    maxRequestBytes: LARGE_REQUEST_BYTES,
    request: z.strictObject({
      task_id: IdSchema,
      kind: z.string().min(1).max(64),
      payload: z.record(z.string(), z.unknown()).default({}),
    }),
    response: Empty,
  },
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
  /**
   * Takes the caller's turn lock on a channel for `holder` (one replica of the caller): `acquired` is false while
   * another holder's lock is alive. A lock not renewed within `ttl_ms` lapses, so a replica that dies mid-turn frees
   * the channel a few seconds later. Acquiring a lock the same holder already has renews it.
   */
  acquireTurnLock: {
    caller: true,
    access: Access.Participant,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({
      channel_id: IdSchema,
      holder: TurnLockHolderSchema,
      ttl_ms: z.number().int().min(1000).max(120_000).default(6000),
    }),
    response: z.strictObject({ acquired: z.boolean() }),
  },
  /** Extends the caller's lock on a channel by its TTL; `renewed` is false when `holder` no longer holds it. */
  renewTurnLock: {
    caller: true,
    access: Access.Participant,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({ channel_id: IdSchema, holder: TurnLockHolderSchema }),
    response: z.strictObject({ renewed: z.boolean() }),
  },
  /** Releases the caller's lock on a channel if `holder` holds it; otherwise does nothing. */
  releaseTurnLock: {
    caller: true,
    access: Access.Participant,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({ channel_id: IdSchema, holder: TurnLockHolderSchema }),
    response: Empty,
  },
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
