import { z } from 'zod';
import {
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_EXPIRED,
  EV_CHANNEL_INVITE,
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_INVITE_REJECT,
  EV_CHANNEL_OPENED,
  EV_CONTEXT_SET,
  EV_EXPECTATION_VIOLATED,
  EV_PACKET,
  EV_TASK_CANCELLED,
  EV_TASK_CANCEL_REQUEST,
  EV_TEXT,
  EV_TURN_FAILED,
} from '@ag2net/protocol';
import type { Envelope } from '@ag2net/protocol';

/** How the transcript shows an envelope (the `data-kind` of its line). */
export type EnvelopeKind = 'message' | 'event' | 'violation' | 'failure';

/** Texts and packets are messages; a violated expectation and a failed turn are marked; the rest are events. */
export function envelopeKind(eventType: string): EnvelopeKind {
  switch (eventType) {
    case EV_TEXT:
    case EV_PACKET:
      return 'message';
    case EV_EXPECTATION_VIOLATED:
      return 'violation';
    case EV_TURN_FAILED:
      return 'failure';
    default:
      return 'event';
  }
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

const RecordSchema = z.record(z.string(), z.unknown());

function record(value: unknown): Record<string, unknown> {
  const parsed = RecordSchema.safeParse(value);
  return parsed.success ? parsed.data : {};
}

/** A packet's handoff or finish, when it routes: `{ kind: 'handoff', tool, reason, target }`. */
export function packetRouting(envelope: Pick<Envelope, 'event_type' | 'event_data'>): {
  kind: string;
  tool: string;
  reason: string;
} | null {
  if (envelope.event_type !== EV_PACKET) return null;
  const routing = record(envelope.event_data['routing']);
  const kind = str(routing['kind']);
  if (kind === '' || kind === 'text') return null;
  return { kind, tool: str(routing['tool']), reason: str(routing['reason']) };
}

/** The words a message line shows: a text's text, a packet's body. */
export function messageText(envelope: Pick<Envelope, 'event_type' | 'event_data'>): string {
  if (envelope.event_type === EV_TEXT) return str(envelope.event_data['text']);
  if (envelope.event_type === EV_PACKET) return str(envelope.event_data['body']);
  return '';
}

/** Short names of the channel protocol's events, for the compact system lines. */
const EVENT_LABELS: Readonly<Record<string, string>> = {
  [EV_CHANNEL_INVITE]: 'invited',
  [EV_CHANNEL_INVITE_ACK]: 'accepted the invite',
  [EV_CHANNEL_INVITE_REJECT]: 'declined the invite',
  [EV_CHANNEL_OPENED]: 'channel opened',
  [EV_CHANNEL_CLOSED]: 'channel closed',
  [EV_CHANNEL_EXPIRED]: 'channel expired',
  [EV_CONTEXT_SET]: 'context changed',
  [EV_TASK_CANCEL_REQUEST]: 'asked to cancel a task',
  [EV_TASK_CANCELLED]: 'task cancelled',
};

/**
 * One line describing a non-message envelope: the event's name and what it carries that matters (a close reason,
 * the violated expectation and who violated it, the failed turn's reason). `nameOf` turns ids into names.
 */
export function eventSummary(
  envelope: Pick<Envelope, 'event_type' | 'event_data'> & Partial<Pick<Envelope, 'audience'>>,
  nameOf: (id: string) => string,
): string {
  const data = envelope.event_data;
  switch (envelopeKind(envelope.event_type)) {
    case 'violation': {
      const violators = Array.isArray(data['violators']) ? data['violators'].map((v) => nameOf(str(v))) : [];
      const who = violators.length > 0 ? ` by ${violators.join(', ')}` : '';
      return `${str(data['expectation']) || 'an expectation'} violated${who}`;
    }
    case 'failure': {
      const code = str(data['code']);
      return `turn failed${str(data['agent_name']) === '' ? '' : ` for ${str(data['agent_name'])}`}: ${
        str(data['reason']) || 'no reason given'
      }${code === '' ? '' : ` (${code})`}`;
    }
    case 'message':
      return messageText(envelope);
    case 'event':
      break;
  }
  const label = EVENT_LABELS[envelope.event_type] ?? envelope.event_type;
  const invitees = envelope.audience ?? [];
  if (envelope.event_type === EV_CHANNEL_INVITE && invitees.length > 0)
    return `${label} ${invitees.map(nameOf).join(', ')}`;
  const reason = str(data['reason']);
  if (envelope.event_type === EV_CONTEXT_SET) {
    const keys = Object.keys(record(data['set']));
    const deleted = Array.isArray(data['delete']) ? data['delete'].map(str) : [];
    const parts = [...keys.map((k) => `set ${k}`), ...deleted.map((k) => `deleted ${k}`)];
    return parts.length > 0 ? `${label}: ${parts.join(', ')}` : label;
  }
  return reason === '' ? label : `${label}: ${reason}`;
}

/**
 * Whether the envelope is seen by some of the channel only: it has an audience that leaves out a participant (an
 * audience naming every participant, as the hub's channel events do, is everyone). The sender always sees its own.
 */
export function isPrivate(
  envelope: Pick<Envelope, 'audience' | 'sender_id'>,
  participants: readonly string[],
): boolean {
  const audience = envelope.audience;
  if (audience === null) return false;
  return participants.some((p) => p !== envelope.sender_id && !audience.includes(p));
}
