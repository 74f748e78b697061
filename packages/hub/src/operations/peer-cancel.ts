import {
  ChannelState,
  EV_TASK_CANCEL_REQUEST,
  isTerminalTaskState,
  type ChannelMetadata,
  type Envelope,
  type TaskMetadata,
} from '@ag2net/protocol';

/** Longest `reason` of a peer's cancel request (AG2 1.2.1's bound on free text a wire client puts before another agent). */
export const MAX_PEER_CANCEL_REASON_CHARS = 500;

/**
 * AG2 1.2.1's one exception to "only participants send": a cancel request shaped exactly as its `tasks` tool sends
 * it, which any registered identity may send once per task. That is an `ag2.task.cancel_request` on an active
 * channel, for a live task of that same channel, addressed to the task's owner alone, whose `event_data` is exactly
 * `{ task_id, reason }` naming the envelope's task, with a `reason` of at most 500 characters. (Once per sender and
 * task is the admission's check, under the channel's lock: `TaskTable.claimPeerCancel`.)
 */
export function isPeerCancelRequest(
  envelope: Envelope,
  metadata: Pick<ChannelMetadata, 'channel_id' | 'state'>,
  task: TaskMetadata | undefined,
): boolean {
  if (envelope.event_type !== EV_TASK_CANCEL_REQUEST || envelope.task_id === null) return false;
  if (task === undefined || task.task_id !== envelope.task_id || isTerminalTaskState(task.state)) return false;
  if (metadata.state !== ChannelState.Active || task.channel_id !== metadata.channel_id) return false;
  const audience = envelope.audience;
  if (audience === null || audience.length !== 1 || audience[0] !== task.owner_id) return false;
  const data = envelope.event_data;
  const keys = Object.keys(data);
  const reason = data['reason'];
  return (
    keys.length === 2 &&
    data['task_id'] === envelope.task_id &&
    typeof reason === 'string' &&
    reason.length <= MAX_PEER_CANCEL_REASON_CHARS
  );
}
