import { z } from 'zod';
import { TimestampSchema } from './envelope.js';
import { IdSchema } from './ids.js';

/** Lifecycle of a task; completed, failed, expired and cancelled are terminal. */
export const TaskState = {
  Created: 'created',
  Running: 'running',
  Completed: 'completed',
  Failed: 'failed',
  Expired: 'expired',
  Cancelled: 'cancelled',
} as const;
export type TaskState = (typeof TaskState)[keyof typeof TaskState];
export const TaskStateSchema = z.enum([
  TaskState.Created,
  TaskState.Running,
  TaskState.Completed,
  TaskState.Failed,
  TaskState.Expired,
  TaskState.Cancelled,
]);

/** The terminal task states. */
export const TERMINAL_TASK_STATES: readonly TaskState[] = Object.freeze([
  TaskState.Completed,
  TaskState.Failed,
  TaskState.Expired,
  TaskState.Cancelled,
]);

/** True for completed, failed, expired and cancelled. */
export function isTerminalTaskState(state: TaskState): boolean {
  return TERMINAL_TASK_STATES.includes(state);
}

/** What a task is for. `capability` ties its outcome to the owner's observed track record. */
export const TaskSpecSchema = z.looseObject({
  title: z.string().default(''),
  objective: z.string().default(''),
  capability: z.string().nullable().default(null),
  inputs: z.record(z.string(), z.unknown()).default({}),
});
export type TaskSpec = z.infer<typeof TaskSpecSchema>;

const OptionalTimestamp = TimestampSchema.nullable().default(null);

/** The hub's record of a task. */
export const TaskMetadataSchema = z.strictObject({
  task_id: IdSchema,
  owner_id: IdSchema,
  spec: TaskSpecSchema.prefault({}),
  state: TaskStateSchema.default(TaskState.Created),
  created_at: TimestampSchema,
  started_at: OptionalTimestamp,
  completed_at: OptionalTimestamp,
  expires_at: OptionalTimestamp,
  last_progress_at: OptionalTimestamp,
  channel_id: IdSchema.nullable().default(null),
  progress: z.record(z.string(), z.unknown()).default({}),
  result: z.unknown().optional(),
  error: z.string().nullable().default(null),
});
export type TaskMetadata = z.infer<typeof TaskMetadataSchema>;
export type TaskMetadataInput = z.input<typeof TaskMetadataSchema>;
