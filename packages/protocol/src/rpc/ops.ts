import { z } from 'zod';
import { ChannelMetadataSchema, ChannelStateSchema } from '../channel.js';
import { DurationSchema } from '../duration.js';
import { EnvelopeSchema, TimestampSchema } from '../envelope.js';
import { IdSchema } from '../ids.js';
import { PassportKindSchema, PassportSchema, ResumeSchema } from '../identity.js';
import { RuleSchema } from '../rule.js';
import { TaskMetadataSchema, TaskStateSchema } from '../task.js';

const Empty = z.strictObject({});
const Limit = z.number().int().min(1).max(1000).default(50);

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
 * One record of the hub's audit trail: `id` (unique; a record published twice keeps its id), `kind`
 * (`agent_registered`, `channel_closed`, `expectation_violated`, …), `at` (when it happened, hub clock) and the
 * kind's fields, AG2's names (`channel_id`, `agent_id`, `reason`, …). The set of kinds is open.
 */
export const AuditRecordSchema = z.looseObject({ id: z.string().min(1), kind: z.string().min(1), at: TimestampSchema });
export type AuditRecord = z.infer<typeof AuditRecordSchema>;

const TaskReply = z.strictObject({ task: TaskMetadataSchema });
const TaskRef = z.strictObject({ task_id: IdSchema });

/**
 * Every hub operation: its request and response schemas, whether the subject carries the caller's agent id
 * (`<prefix>.hub.v1.<op>.<caller_id>`) so that NATS permissions can pin a connection to its identity, and whether
 * it is `idempotent`: the same request applied twice has the effect of once (reads, and writes keyed by an id the
 * client chose), so a client may resend it after a timeout. A non-idempotent request is resent only when it provably
 * reached no hub (no responders).
 */
export const HUB_OPS = {
  register: {
    caller: false,
    idempotent: true,
    request: z.strictObject({
      passport: PassportSchema,
      resume: ResumeSchema.prefault({}),
      skill_md: z.string().max(65_536).nullable().default(null),
      rule: RuleSchema.nullable().default(null),
    }),
    response: AgentReply,
  },
  unregister: { caller: true, idempotent: false, request: Empty, response: Empty },
  getAgent: {
    caller: false,
    idempotent: true,
    request: z.strictObject({ name_or_id: z.string().min(1) }),
    response: AgentReply,
  },
  getResume: {
    caller: false,
    idempotent: true,
    request: z.strictObject({ agent_id: IdSchema }),
    response: z.strictObject({ resume: ResumeSchema }),
  },
  getSkill: {
    caller: false,
    idempotent: true,
    request: z.strictObject({ agent_id: IdSchema }),
    response: z.strictObject({ skill_md: z.string().nullable() }),
  },
  getRule: {
    caller: false,
    idempotent: true,
    request: z.strictObject({ agent_id: IdSchema }),
    response: z.strictObject({ rule: RuleSchema }),
  },
  findAgentId: {
    caller: false,
    idempotent: true,
    request: z.strictObject({ name: z.string().min(1) }),
    response: z.strictObject({ agent_id: IdSchema.nullable() }),
  },
  listAgents: {
    caller: false,
    idempotent: true,
    request: z.strictObject({
      capability: z.string().nullable().default(null),
      query: z.string().nullable().default(null),
      kind: PassportKindSchema.nullable().default(null),
      sort_by: z.enum(['name']).nullable().default(null),
      limit: Limit,
    }),
    response: z.strictObject({ agents: z.array(PassportSchema) }),
  },
  setResume: {
    caller: true,
    idempotent: false,
    request: z.strictObject({ resume: ResumeSchema }),
    response: z.strictObject({ resume: ResumeSchema }),
  },
  setSkill: {
    caller: true,
    idempotent: true,
    request: z.strictObject({ skill_md: z.string().max(65_536).nullable() }),
    response: Empty,
  },
  setRule: {
    caller: true,
    idempotent: false,
    request: z.strictObject({ rule: RuleSchema }),
    response: z.strictObject({ rule: RuleSchema }),
  },
  recordObservation: {
    caller: true,
    idempotent: false,
    request: z.strictObject({
      capability: z.string().min(1),
      outcome: TaskStateSchema,
      latency_ms: z.number().min(0).nullable().default(null),
      task_id: z.string().nullable().default(null),
    }),
    response: z.strictObject({ resume: ResumeSchema }),
  },
  createChannel: {
    caller: true,
    idempotent: true,
    request: z.strictObject({
      /** Proposed id, so that a retried create finds the channel it already made. */
      channel_id: IdSchema.nullable().default(null),
      type: z.string().min(1),
      version: z.number().int().min(1).default(1),
      participants: z.array(IdSchema).max(256),
      ttl: DurationSchema.nullable().default(null),
      knobs: z.record(z.string(), z.unknown()).default({}),
      intent: z.string().nullable().default(null),
      labels: z.record(z.string(), z.string()).default({}),
    }),
    response: z.strictObject({ channel: ChannelMetadataSchema }),
  },
  getChannel: {
    caller: false,
    idempotent: true,
    request: z.strictObject({ channel_id: IdSchema }),
    response: z.strictObject({ channel: ChannelMetadataSchema }),
  },
  listChannels: {
    caller: false,
    idempotent: true,
    request: z.strictObject({
      agent_id: IdSchema.nullable().default(null),
      state: ChannelStateSchema.nullable().default(null),
      limit: Limit,
    }),
    response: z.strictObject({ channels: z.array(ChannelMetadataSchema) }),
  },
  closeChannel: {
    caller: true,
    idempotent: true,
    request: z.strictObject({ channel_id: IdSchema, reason: z.string().max(256).default('') }),
    response: z.strictObject({ channel: ChannelMetadataSchema }),
  },
  post: {
    caller: true,
    idempotent: true,
    request: EnvelopeSchema,
    response: z.strictObject({
      envelope_id: IdSchema,
      sequence: z.number().int().positive(),
      created_at: TimestampSchema,
    }),
  },
  readWal: {
    caller: true,
    idempotent: true,
    request: z.strictObject({
      channel_id: IdSchema,
      /** First sequence to return (1-based, inclusive); default 1. */
      since: z.number().int().min(1).default(1),
      /** Last sequence to return (inclusive); default the end of the log. */
      until: z.number().int().min(1).nullable().default(null),
      limit: z.number().int().min(1).max(10_000).default(1000),
    }),
    response: z.strictObject({ envelopes: z.array(EnvelopeSchema), last_sequence: z.number().int().min(0) }),
  },
  findEnvelopeByCausation: {
    caller: true,
    idempotent: true,
    request: z.strictObject({ channel_id: IdSchema, sender_id: IdSchema, causation_id: z.string().min(1) }),
    response: z.strictObject({ envelope: EnvelopeSchema.nullable() }),
  },
  canSend: {
    caller: true,
    idempotent: true,
    request: z.strictObject({ channel_id: IdSchema, event_type: z.string().nullable().default(null) }),
    response: z.strictObject({ allowed: z.boolean() }),
  },
  pendingTurnsFor: {
    caller: true,
    idempotent: true,
    request: Empty,
    response: z.strictObject({ turns: z.array(PendingTurnSchema) }),
  },
  adapterState: {
    caller: false,
    idempotent: true,
    request: z.strictObject({ channel_id: IdSchema }),
    response: z.strictObject({ state: z.record(z.string(), z.unknown()).nullable() }),
  },
  health: { caller: false, idempotent: true, request: Empty, response: HealthSchema },
  /**
   * AG2's `observe_task`: records a task the caller owns (`owner_id` must be the caller). A new task id is checked
   * against the owner's `max_concurrent_tasks` and gets `expires_at` from `task_ttl_default` when it has none; a
   * known one is updated (state, timestamps, channel, progress merged).
   */
  observeTask: {
    caller: true,
    idempotent: true,
    request: z.strictObject({ task: TaskMetadataSchema }),
    response: TaskReply,
  },
  /** AG2's `update_task`, owner only: state, progress (merged), result, error. A terminal task is left as it is. */
  updateTask: {
    caller: true,
    idempotent: true,
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
  getTask: { caller: true, idempotent: true, request: TaskRef, response: TaskReply },
  /** The tasks the caller may see, filtered by owner, channel and state, in creation order. */
  listTasks: {
    caller: true,
    idempotent: true,
    request: z.strictObject({
      agent_id: IdSchema.nullable().default(null),
      channel_id: IdSchema.nullable().default(null),
      state: TaskStateSchema.nullable().default(null),
      limit: Limit,
    }),
    response: z.strictObject({ tasks: z.array(TaskMetadataSchema) }),
  },
  /** Stores the owner's checkpoint of a task (last write wins). */
  checkpointTask: {
    caller: true,
    idempotent: true,
    request: z.strictObject({ task_id: IdSchema, state: z.record(z.string(), z.unknown()) }),
    response: Empty,
  },
  /** The owner's last checkpoint of a task, or `null`. */
  readTaskCheckpoint: {
    caller: true,
    idempotent: true,
    request: TaskRef,
    response: z.strictObject({ state: z.record(z.string(), z.unknown()).nullable() }),
  },
  /** AG2's `fire_task_event`: a task event of the caller's runtime (e.g. `mirror_failed`) goes to the audit trail. */
  fireTaskEvent: {
    caller: true,
    idempotent: false,
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
    idempotent: false,
    request: z.strictObject({
      channel_id: IdSchema,
      envelope_id: IdSchema,
      exc_type: z.string().max(256).default('Error'),
      exc_message: z.string().max(4096).default(''),
    }),
    response: Empty,
  },
  /**
   * The audit trail, oldest first, filtered: `kinds` (any of; empty is all), `channel_id`, `agent_id` (records that
   * name the agent in any role), and `since` (inclusive) / `until` (exclusive) on `at`. For operators.
   */
  readAudit: {
    caller: false,
    idempotent: true,
    request: z.strictObject({
      kinds: z.array(z.string().min(1)).default([]),
      channel_id: IdSchema.nullable().default(null),
      agent_id: IdSchema.nullable().default(null),
      since: TimestampSchema.nullable().default(null),
      until: TimestampSchema.nullable().default(null),
      limit: z.number().int().min(1).max(10_000).default(1000),
    }),
    response: z.strictObject({ records: z.array(AuditRecordSchema) }),
  },
} as const;

export type HubOp = keyof typeof HUB_OPS;
export type HubRequest<Op extends HubOp> = z.input<(typeof HUB_OPS)[Op]['request']>;
export type HubRequestParsed<Op extends HubOp> = z.output<(typeof HUB_OPS)[Op]['request']>;
export type HubResponse<Op extends HubOp> = z.output<(typeof HUB_OPS)[Op]['response']>;

/** The operation names, in a stable order. */
export const HUB_OP_NAMES = Object.keys(HUB_OPS) as readonly HubOp[];
