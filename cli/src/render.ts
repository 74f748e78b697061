import { EV_TEXT, type Envelope, type Passport } from '@ag2net/protocol';
import type { Output, Tone } from './output.js';

/**
 * Agent names by id for display, looked up once each through the public directory; an id nobody has (an identity
 * that unregistered) is shown as itself.
 */
export class NameBook {
  readonly #names = new Map<string, Promise<string>>();
  /** The ids looked up so far that are agents', with their names. */
  readonly #known = new Map<string, string>();

  constructor(private readonly hub: { getAgent(nameOrId: string): Promise<Passport> }) {}

  name(agentId: string): Promise<string> {
    let name = this.#names.get(agentId);
    if (name === undefined) {
      name = this.hub.getAgent(agentId).then(
        (p) => {
          if (p.agent_id !== null) this.#known.set(p.agent_id, p.name);
          return p.name;
        },
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

  /** Knows a passport's name without asking (a listing had it). */
  remember(passport: Pick<Passport, 'agent_id' | 'name'>): void {
    if (passport.agent_id === null) return;
    this.#known.set(passport.agent_id, passport.name);
    this.#names.set(passport.agent_id, Promise.resolve(passport.name));
  }

  /**
   * `value` (JSON data: event data, knobs, adapter state) with every string that is the id of an agent looked up so
   * far replaced by the agent's name, in values and in keys, at any depth. Ids of anything else stay as they are.
   */
  withNames(value: unknown): unknown {
    if (typeof value === 'string') return this.#known.get(value) ?? value;
    if (Array.isArray(value)) return value.map((v) => this.withNames(v));
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [this.#known.get(k) ?? k, this.withNames(v)] as const),
    );
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

/** The text of a text envelope, or the event data as compact JSON (agents' ids named, with `names`). */
export function envelopeBody(envelope: Envelope, names?: NameBook): string {
  const text = envelope.event_data['text'];
  if (envelope.event_type === EV_TEXT && typeof text === 'string') return text;
  const data = JSON.stringify(names === undefined ? envelope.event_data : names.withNames(envelope.event_data));
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
  const body = envelopeBody(envelope, names);
  out.line(`${seq} ${out.paint('dim', shortTime(envelope.created_at))} ${who}${event} ${body}`.trimEnd());
}

/** The provider of the scripted offline model, as a passport names it. */
const SCRIPTED_PROVIDER = 'scripted';

/** The model of a passport for display: `provider/model`, `scripted` for the scripted model, `-` when unknown. */
export function modelOf(passport: Pick<Passport, 'provider' | 'model'>): string {
  if (passport.provider === SCRIPTED_PROVIDER) return SCRIPTED_PROVIDER;
  return [passport.provider, passport.model].filter((x) => x !== null && x !== '').join('/') || '-';
}
