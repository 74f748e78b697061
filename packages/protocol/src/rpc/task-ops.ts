import { z } from 'zod';
import { IdSchema } from '../ids.js';
import { TaskMetadataSchema, TaskStateSchema } from '../task.js';
import { Access, TurnLockHolderSchema } from './access.js';
import { Cursor, DEFAULT_MAX_REQUEST_BYTES, Empty, LARGE_REQUEST_BYTES, Limit, NextCursor } from './op-parts.js';

const TaskReply = z.strictObject({ task: TaskMetadataSchema });
const TaskRef = z.strictObject({ task_id: IdSchema });

/** The hub operations of tasks (AG2's task mirror and task reads); part of `HUB_OPS`. */
export const TASK_OPS = {
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
} as const;

/** The hub operations of turn locks (one replica of an agent holds a channel's turn); part of `HUB_OPS`. */
export const TURN_LOCK_OPS = {
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
} as const;
