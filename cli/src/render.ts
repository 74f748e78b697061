import { EV_TEXT, type Envelope, type Passport } from '@ag2net/protocol';
import type { Output, Tone } from './output.js';

/**
 * Agent names by id for display, looked up once each through the public directory; an id nobody has (an identity
 * that unregistered) is shown as itself.
 */
export class NameBook {
  readonly #names = new Map<string, Promise<string>>();

  constructor(private readonly hub: { getAgent(nameOrId: string): Promise<Passport> }) {}

  name(agentId: string): Promise<string> {
    let name = this.#names.get(agentId);
    if (name === undefined) {
      name = this.hub.getAgent(agentId).then(
        (p) => p.name,
        () => agentId,
      );
      this.#names.set(agentId, name);
    }
    return name;
  }

  /** Names of several ids, in order. */
  names(agentIds: readonly string[]): Promise<string[]> {
    return Promise.all(agentIds.map((id) => this.name(id)));
  }
}

/** `HH:MM:SS` of an ISO timestamp (the date when it is not today), for one-line listings. */
export function shortTime(iso: string | null | undefined, now = new Date()): string {
  if (iso === null || iso === undefined || iso === '') return '-';
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const day = at.toISOString().slice(0, 10);
  return day === now.toISOString().slice(0, 10)
    ? at.toISOString().slice(11, 19)
    : `${day} ${at.toISOString().slice(11, 16)}`;
}

/** The text of a text envelope, or the event data as compact JSON. */
export function envelopeBody(envelope: Envelope): string {
  const text = envelope.event_data['text'];
  if (envelope.event_type === EV_TEXT && typeof text === 'string') return text;
  const data = JSON.stringify(envelope.event_data);
  return data === '{}' ? '' : data;
}

/** The colour of an event type: text plain, protocol events dim, violations and failures red. */
export function eventTone(eventType: string): Tone | null {
  if (/violat|fail|reject|expired|error/.test(eventType)) return 'bad';
  if (eventType === EV_TEXT) return null;
  return 'dim';
}

/** One line per envelope: `#seq time sender [→ audience] event body`. Private envelopes name their audience. */
export async function printEnvelope(out: Output, names: NameBook, envelope: Envelope): Promise<void> {
  const sender = await names.name(envelope.sender_id);
  const to = envelope.audience === null ? '' : ` → ${(await names.names(envelope.audience)).join(',')}`;
  const seq = out.paint('dim', `#${envelope.sequence ?? '?'}`.padStart(5));
  const tone = eventTone(envelope.event_type);
  const event =
    envelope.event_type === EV_TEXT
      ? ''
      : ` ${tone === null ? envelope.event_type : out.paint(tone, envelope.event_type)}`;
  const who = `${out.paint('accent', sender)}${to === '' ? '' : out.paint('warn', to)}`;
  out.line(
    `${seq} ${out.paint('dim', shortTime(envelope.created_at))} ${who}${event} ${envelopeBody(envelope)}`.trimEnd(),
  );
}
