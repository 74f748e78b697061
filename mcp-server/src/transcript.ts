import { EV_PACKET, EV_TEXT, type Envelope } from '@ag2net/protocol';

/** The longest text of one envelope a tool or resource shows, in characters; longer ones are cut with `…`. */
export const MAX_ENVELOPE_TEXT_CHARS = 8_000;

/** One envelope as tools and resources show it to a model host. */
export interface ShownEnvelope {
  readonly envelope_id: string;
  readonly channel_id: string;
  readonly sender_id: string;
  /** The sender's name when known, else its id. */
  readonly sender: string;
  readonly event_type: string;
  /** The text of a message (`ag2.msg.text`) or the body of a packet; a short summary of other events. */
  readonly text: string;
  readonly created_at: string;
}

/** Resolves an agent id to a name; returns the id itself when the name is unknown. */
export type NameOf = (agentId: string) => string;

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The words of an envelope: a message's text, a packet's body, else the event type and its data in short. */
export function envelopeText(envelope: Envelope, max = MAX_ENVELOPE_TEXT_CHARS): string {
  const data = envelope.event_data;
  if (envelope.event_type === EV_TEXT && typeof data['text'] === 'string') return cut(data['text'], max);
  if (envelope.event_type === EV_PACKET && typeof data['body'] === 'string') return cut(data['body'], max);
  const reason = data['reason'];
  if (typeof reason === 'string' && reason !== '') return cut(`(${envelope.event_type}: ${reason})`, max);
  return `(${envelope.event_type})`;
}

/** An envelope as shown: ids, sender name, type, text (cut at `MAX_ENVELOPE_TEXT_CHARS`), time. */
export function showEnvelope(envelope: Envelope, nameOf: NameOf): ShownEnvelope {
  return {
    envelope_id: envelope.envelope_id,
    channel_id: envelope.channel_id,
    sender_id: envelope.sender_id,
    sender: nameOf(envelope.sender_id),
    event_type: envelope.event_type,
    text: envelopeText(envelope),
    created_at: envelope.created_at,
  };
}

/** A transcript as plain text, one envelope a line group: `[time] sender: text`. */
export function renderTranscript(envelopes: readonly ShownEnvelope[]): string {
  return envelopes.map((e) => `[${e.created_at}] ${e.sender}: ${e.text}`).join('\n');
}
