import {
  ChannelEndDataSchema,
  ChannelState,
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_EXPIRED,
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_INVITE_REJECT,
  EV_CHANNEL_OPENED,
  type Envelope,
} from '@ag2net/protocol';
import type { ChannelRuntime } from './channel-runtime.js';

/**
 * Applies what a handshake or lifecycle envelope found in the WAL says about the channel to its metadata: the WAL is
 * the truth, and metadata may lag it (a crash between append and persist, or an append by another writer).
 */
export function reconcileMetadata(rt: ChannelRuntime, envelope: Envelope): void {
  const m = rt.metadata;
  switch (envelope.event_type) {
    case EV_CHANNEL_INVITE_ACK:
      rt.metadata = { ...m, pending_acks: m.pending_acks.filter((id) => id !== envelope.sender_id) };
      return;
    case EV_CHANNEL_INVITE_REJECT:
      rt.metadata = {
        ...m,
        pending_acks: m.pending_acks.filter((id) => id !== envelope.sender_id),
        rejected_by: m.rejected_by.includes(envelope.sender_id)
          ? m.rejected_by
          : [...m.rejected_by, envelope.sender_id],
      };
      return;
    case EV_CHANNEL_OPENED:
      if (m.state === ChannelState.Pending) rt.metadata = { ...m, state: ChannelState.Active };
      return;
    case EV_CHANNEL_CLOSED:
    case EV_CHANNEL_EXPIRED: {
      const data = ChannelEndDataSchema.safeParse(envelope.event_data);
      rt.metadata = {
        ...m,
        state: envelope.event_type === EV_CHANNEL_EXPIRED ? ChannelState.Expired : ChannelState.Closed,
        close_reason: data.success ? data.data.reason : m.close_reason,
        closed_at: envelope.created_at,
      };
      rt.closingAt = null;
      rt.causation.clear();
      return;
    }
    default:
      return;
  }
}
