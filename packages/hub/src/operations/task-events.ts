import { repr } from '@ag2net/protocol/internal';
import {
  EV_TASK_CANCELLED,
  EV_TASK_CANCEL_REQUEST,
  ProtocolError,
  TaskCancelDataSchema,
  TaskState,
  isTerminalTaskState,
  type Envelope,
  type TaskMetadata,
} from '@ag2net/protocol';
import type { ChannelRuntime } from '../stores/channel-runtime.js';
import { endTask, type TaskChangeDeps } from './task-ops.js';
import type { HomeStores } from '../partition/hub-parts.js';
import type { PartitionPick } from '../partition/partition.js';

/**
 * Admission checks of the two task envelopes (the event data shape is already checked):
 * - `ag2.task.cancel_request` asks a task's owner to stop. It must name a task of this channel that has not ended,
 *   must reach the owner (broadcast, or the owner in the audience), and its `task_id` field, if set, must agree.
 * - `ag2.task.cancelled` says the owner stopped it: only the owner may send it, for a task of this channel. AG2
 *   defined it but never emitted it; here it ends the task `cancelled`.
 */
export function checkTaskEvent(ctx: Pick<HomeStores, 'tasks'>, rt: ChannelRuntime, envelope: Envelope): void {
  const type = envelope.event_type;
  if (type !== EV_TASK_CANCEL_REQUEST && type !== EV_TASK_CANCELLED) return;
  const data = TaskCancelDataSchema.parse(envelope.event_data);
  const task = ctx.tasks.require(data.task_id);
  const tid = repr(task.task_id);
  if (envelope.task_id !== null && envelope.task_id !== task.task_id) {
    throw new ProtocolError(`envelope task_id ${repr(envelope.task_id)} does not match event_data.task_id ${tid}`);
  }
  if (task.channel_id !== rt.metadata.channel_id) {
    throw new ProtocolError(`task ${tid} does not belong to channel ${repr(rt.metadata.channel_id)}`);
  }
  if (isTerminalTaskState(task.state)) throw new ProtocolError(`task ${tid} is already ${task.state}`);
  if (type === EV_TASK_CANCEL_REQUEST) checkReachesOwner(envelope, task);
  else if (envelope.sender_id !== task.owner_id) {
    throw new ProtocolError(`only the owner ${repr(task.owner_id)} may report task ${tid} cancelled`);
  }
}

function checkReachesOwner(envelope: Envelope, task: TaskMetadata): void {
  if (envelope.audience !== null && !envelope.audience.includes(task.owner_id)) {
    throw new ProtocolError(
      `cancel_request for task ${repr(task.task_id)} must reach its owner ${repr(task.owner_id)}`,
    );
  }
}

/**
 * After admission: an owner's `ag2.task.cancelled` ends the task `cancelled` with its reason as the error. A hub that
 * does not write the tasks (a partitioned prefix's other hubs) leaves the end to the home partition's owner
 * (`TaskEnds`), under this partition's lease.
 */
export async function afterTaskEvent(
  ctx: TaskChangeDeps & Pick<HomeStores, 'taskEnds'> & PartitionPick<'mayWrite'>,
  envelope: Envelope,
): Promise<void> {
  if (envelope.event_type !== EV_TASK_CANCELLED) return;
  const data = TaskCancelDataSchema.parse(envelope.event_data);
  if (!ctx.tasks.writesHere()) {
    const end = {
      state: 'cancelled' as const,
      reason: data.reason.slice(0, 1024),
      channel_id: envelope.channel_id,
      envelope_id: envelope.envelope_id,
    };
    await ctx.taskEnds.request(data.task_id, end, ctx.partition.mayWrite);
    return;
  }
  await endTask(ctx, data.task_id, { state: TaskState.Cancelled, reason: data.reason });
}
