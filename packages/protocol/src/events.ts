/** Plain text turn: `{ "text": string }`. */
export const EV_TEXT = 'ag2.msg.text';
/** Workflow packet with routing, context updates and a body (see `PacketDataSchema`). */
export const EV_PACKET = 'ag2.packet';
/** Hub → invitee: you are invited into a pending channel. */
export const EV_CHANNEL_INVITE = 'ag2.channel.invite';
/** Invitee → hub: the invitee accepts (its `causation_id` is the invite's envelope id). */
export const EV_CHANNEL_INVITE_ACK = 'ag2.channel.invite.ack';
/** Invitee → hub: the invitee declines; the channel closes with `invite_rejected`. */
export const EV_CHANNEL_INVITE_REJECT = 'ag2.channel.invite.reject';
/** Hub → participants: every invitee acked; the channel is active. */
export const EV_CHANNEL_OPENED = 'ag2.channel.opened';
/** Hub → participants: the channel is closed; `reason` says why. */
export const EV_CHANNEL_CLOSED = 'ag2.channel.closed';
/** Hub → participants: the channel's TTL ran out. */
export const EV_CHANNEL_EXPIRED = 'ag2.channel.expired';
/** Hub → participants: an expectation of the channel's manifest was violated. */
export const EV_EXPECTATION_VIOLATED = 'ag2.expectation.violated';
/** Participant → workflow: set and delete workflow context variables. */
export const EV_CONTEXT_SET = 'ag2.context.set';
/** Anyone → a task owner: please cancel this task. */
export const EV_TASK_CANCEL_REQUEST = 'ag2.task.cancel_request';
/** Task owner → channel: the task was cancelled. */
export const EV_TASK_CANCELLED = 'ag2.task.cancelled';
/**
 * Agent → channel: the agent could not take its turn (its model failed after its retries, timed out or answered
 * malformed output). `event_data` says who and why in words a person can read (see `TurnFailedDataSchema`).
 */
export const EV_TURN_FAILED = 'ag2.turn.failed';

/** The six channel-protocol event types, in AG2's order. */
export const CHANNEL_PROTOCOL_EVENTS: readonly string[] = Object.freeze([
  EV_CHANNEL_INVITE,
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_INVITE_REJECT,
  EV_CHANNEL_OPENED,
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_EXPIRED,
]);

const CHANNEL_PREFIX = 'ag2.channel.';
const TASK_PREFIX = 'ag2.task.';

/** True for every `ag2.channel.*` event type (written by the hub, except an invitee's ack or reject). */
export function isChannelProtocolEvent(eventType: string): boolean {
  return eventType.startsWith(CHANNEL_PREFIX);
}

/** True for every `ag2.task.*` event type. */
export function isTaskEvent(eventType: string): boolean {
  return eventType.startsWith(TASK_PREFIX);
}

/** True for channel-protocol and task events: the events adapters never treat as turns. */
export function isProtocolEvent(eventType: string): boolean {
  return isChannelProtocolEvent(eventType) || isTaskEvent(eventType);
}

/** True for an invitee's handshake answer (ack or reject). */
export function isHandshakeReply(eventType: string): boolean {
  return eventType === EV_CHANNEL_INVITE_ACK || eventType === EV_CHANNEL_INVITE_REJECT;
}
