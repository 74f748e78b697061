import type { ChannelMetadata, Envelope } from '@ag2net/protocol';
import type { ChannelPreview } from '../../../src/api-schemas.js';
import {
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_EXPIRED,
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_OPENED,
  EV_PACKET,
  EV_TEXT,
} from '@ag2net/protocol';
import { messageText } from './envelopes.js';

// A channel as its log says it is now. The channel page's header and the channel list read the channel's metadata
// (`GET /v1/channels…`) and then fold each envelope their stream delivers into it, with these functions: the header,
// the transcript and the list change on the same event, without waiting for a read of the metadata. The hub updates
// the metadata just after it appends a lifecycle event, so a read made on the event may still answer the state
// before it; a fold never goes back.

/** Where a state is in a channel's life: a channel moves only forward. */
const RANK: Readonly<Record<string, number>> = { pending: 0, active: 1, closing: 2, closed: 3, expired: 3 };

function rank(state: string): number {
  return RANK[state] ?? 0;
}

/** Whether nothing more is admitted (closing, closed, expired). */
export function isEnded(state: string): boolean {
  return rank(state) >= 2;
}

function reasonOf(envelope: Pick<Envelope, 'event_data'>): string {
  const reason = envelope.event_data['reason'];
  return typeof reason === 'string' ? reason : '';
}

/**
 * The channel after one of its envelopes: `opened` makes a pending channel active, an invite ack takes its sender off
 * `pending_acks`, `closed` and `expired` end it (with the close reason and time). Any other envelope, and a lifecycle
 * event the channel is already past, leave it as it is.
 */
export function foldEnvelope(channel: ChannelMetadata, envelope: Envelope): ChannelMetadata {
  switch (envelope.event_type) {
    case EV_CHANNEL_OPENED:
      return rank(channel.state) < rank('active') ? { ...channel, state: 'active', pending_acks: [] } : channel;
    case EV_CHANNEL_INVITE_ACK:
      return channel.pending_acks.includes(envelope.sender_id)
        ? { ...channel, pending_acks: channel.pending_acks.filter((id) => id !== envelope.sender_id) }
        : channel;
    case EV_CHANNEL_CLOSED:
    case EV_CHANNEL_EXPIRED: {
      if (rank(channel.state) >= rank('closed')) return channel;
      return {
        ...channel,
        state: envelope.event_type === EV_CHANNEL_CLOSED ? 'closed' : 'expired',
        closed_at: envelope.created_at === '' ? channel.closed_at : envelope.created_at,
        close_reason: reasonOf(envelope) || channel.close_reason,
        pending_acks: [],
      };
    }
    default:
      return channel;
  }
}

/** `channel` with each of `envelopes` folded in, in sequence order. */
export function foldEnvelopes(channel: ChannelMetadata, envelopes: readonly Envelope[]): ChannelMetadata {
  return [...envelopes].sort((a, b) => (a.sequence ?? 0) - (b.sequence ?? 0)).reduce(foldEnvelope, channel);
}

/**
 * A fresh read of the metadata against what the console knew: the read wins, unless it is behind in the channel's
 * life (the hub had not updated its metadata yet when it answered); then the lifecycle fields known stay.
 */
export function mergeChannel(known: ChannelMetadata | undefined, read: ChannelMetadata): ChannelMetadata {
  if (known === undefined || known.channel_id !== read.channel_id || rank(read.state) >= rank(known.state)) return read;
  return {
    ...read,
    state: known.state,
    closed_at: known.closed_at,
    close_reason: known.close_reason,
    pending_acks: known.pending_acks,
  };
}

/** A preview after an envelope: a text or packet becomes the last message; any envelope is the last activity. */
export function foldPreview(preview: ChannelPreview | undefined, envelope: Envelope): ChannelPreview {
  const sequence = envelope.sequence ?? 0;
  const base: ChannelPreview = preview ?? { last_sequence: 0, last_activity_at: null, last_message: null };
  if (sequence !== 0 && sequence <= base.last_sequence) return base;
  const isMessage = envelope.event_type === EV_TEXT || envelope.event_type === EV_PACKET;
  return {
    last_sequence: Math.max(base.last_sequence, sequence),
    last_activity_at: envelope.created_at === '' ? base.last_activity_at : envelope.created_at,
    last_message: isMessage
      ? {
          sequence,
          sender_id: envelope.sender_id,
          event_type: envelope.event_type,
          text: messageText(envelope),
          created_at: envelope.created_at,
        }
      : base.last_message,
  };
}
