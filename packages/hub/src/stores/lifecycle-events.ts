import {
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_EXPIRED,
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_INVITE_REJECT,
  EV_CHANNEL_OPENED,
} from '@ag2net/protocol';

/** The event types whose folding changes channel metadata (`reconcileMetadata`): handshake answers and lifecycle. */
const LIFECYCLE_EVENTS: ReadonlySet<string> = new Set([
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_INVITE_REJECT,
  EV_CHANNEL_OPENED,
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_EXPIRED,
]);

/** Whether folding an envelope of this type changes the channel's metadata. */
export function isLifecycleEvent(eventType: string): boolean {
  return LIFECYCLE_EVENTS.has(eventType);
}
