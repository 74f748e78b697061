import {
  EV_PACKET,
  EV_TEXT,
  EV_TURN_FAILED,
  TurnFailedDataSchema,
  TurnReportSchema,
  failureCauseLine,
  type Envelope,
  type Passport,
  type TurnFailedData,
  type TurnReport,
} from '@ag2net/protocol';
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

/**
 * The text of a text envelope, or the event data as compact JSON (agents' ids named, with `names`). An answer's turn
 * report (`turn`) is left out: `turnSuffix` says it in words.
 */
export function envelopeBody(envelope: Envelope, names?: NameBook): string {
  const text = envelope.event_data['text'];
  if (envelope.event_type === EV_TEXT && typeof text === 'string') return text;
  const shown = isAnswer(envelope) ? withoutTurn(envelope.event_data) : envelope.event_data;
  const data = JSON.stringify(names === undefined ? shown : names.withNames(shown));
  return data === '{}' ? '' : data;
}

function isAnswer(envelope: Envelope): boolean {
  return envelope.event_type === EV_TEXT || envelope.event_type === EV_PACKET;
}

function withoutTurn(data: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).filter(([key]) => key !== 'turn'));
}

/** `840 ms`, `1.2 s`, `2 m 5 s`: how long a turn took. */
export function durationText(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(Math.round(ms / 100) / 10).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} m ${seconds % 60} s`;
}

/**
 * An answer's turn report in one compact suffix, `· 1.2 s · 312→54 tokens · 1 retry · openai/gpt-4.1-mini` (tokens
 * when the provider reported them, retries when there were some); `''` when the envelope carries no readable report.
 */
export function turnSuffix(envelope: Envelope): string {
  if (!isAnswer(envelope)) return '';
  const parsed = TurnReportSchema.safeParse(envelope.event_data['turn']);
  if (!parsed.success) return '';
  const report: TurnReport = parsed.data;
  const { usage, retries } = report;
  return [
    durationText(report.duration_ms),
    usage === undefined ? null : `${usage.input_tokens}→${usage.output_tokens} tokens`,
    retries === undefined || retries === 0 ? null : `${retries} ${retries === 1 ? 'retry' : 'retries'}`,
    modelOf(report),
  ]
    .filter((part) => part !== null)
    .map((part) => `· ${part}`)
    .join(' ');
}

/**
 * What an `ag2.turn.failed` says, after the agent's name: `could not answer: <reason> (<cause>) after <n> attempts
 * [provider/model]`, each part when the notice has it (the attempts not twice when the reason says them already);
 * `null` when its data is not a failure notice's.
 */
export function turnFailedText(envelope: Envelope): string | null {
  if (envelope.event_type !== EV_TURN_FAILED) return null;
  const parsed = TurnFailedDataSchema.safeParse(envelope.event_data);
  if (!parsed.success) return null;
  const data: TurnFailedData = parsed.data;
  const { cause, attempts } = data;
  const tries = attempts === undefined ? null : `after ${attempts} ${attempts === 1 ? 'attempt' : 'attempts'}`;
  const model =
    data.provider === undefined && data.model === undefined
      ? null
      : `[${modelOf({ provider: data.provider ?? null, model: data.model ?? null })}]`;
  return [
    `could not answer: ${data.reason || data.code}`,
    cause === undefined ? null : `(${failureCauseLine(cause)})`,
    tries === null || data.reason.includes(tries) ? null : tries,
    model,
  ]
    .filter((part) => part !== null)
    .join(' ');
}

/** Options of `envelopePrinter`. */
export interface PrintOptions {
  /**
   * Follow each answer with its turn report (`turnSuffix`: duration, tokens, retries, model), for logs read later
   * (`wal`, `tail`); default false, so that a conversation (`chat`) shows the answers alone.
   */
  readonly turns?: boolean;
}

/** The colour of an event type: text plain, protocol events dim, violations and failures red. */
export function eventTone(eventType: string): Tone | null {
  if (/violat|fail|reject|expired|error/.test(eventType)) return 'bad';
  if (eventType === EV_TEXT) return null;
  return 'dim';
}

/**
 * One line per envelope: `#seq time sender [→ audience] event body`. Private envelopes name their audience; a failure
 * notice says `<agent> could not answer: …` (`turnFailedText`). Answers are printed alone (see `envelopePrinter`).
 */
export function printEnvelope(out: Output, names: NameBook, envelope: Envelope): Promise<void> {
  return envelopePrinter(out, names)(envelope);
}

/** Prints envelopes as `printEnvelope` does; with `turns`, each answer ends with its turn report (`turnSuffix`). */
export function envelopePrinter(
  out: Output,
  names: NameBook,
  options: PrintOptions = {},
): (envelope: Envelope) => Promise<void> {
  return async (envelope) => {
    const sender = await names.name(envelope.sender_id);
    const to = envelope.audience === null ? '' : ` → ${(await names.names(envelope.audience)).join(',')}`;
    const seq = out.paint('dim', `#${envelope.sequence ?? '?'}`.padStart(5));
    const who = `${out.paint('accent', sender)}${to === '' ? '' : out.paint('warn', to)}`;
    const head = `${seq} ${out.paint('dim', shortTime(envelope.created_at))} ${who}`;
    const failed = turnFailedText(envelope);
    if (failed !== null) {
      out.line(`${head} ${out.paint('bad', failed)}`);
      return;
    }
    const tone = eventTone(envelope.event_type);
    const event =
      envelope.event_type === EV_TEXT
        ? ''
        : ` ${tone === null ? envelope.event_type : out.paint(tone, envelope.event_type)}`;
    const body = envelopeBody(envelope, names);
    const suffix = options.turns === true ? turnSuffix(envelope) : '';
    out.line(`${`${head}${event} ${body}`.trimEnd()}${suffix === '' ? '' : ` ${out.paint('dim', suffix)}`}`);
  };
}

/** The provider of the scripted offline model, as a passport names it. */
const SCRIPTED_PROVIDER = 'scripted';

/**
 * The model of a passport (or a turn report) for display: `provider/model`, `scripted` for the scripted model, `-`
 * when unknown.
 */
export function modelOf(passport: Pick<Passport, 'provider' | 'model'>): string {
  if (passport.provider === SCRIPTED_PROVIDER) return SCRIPTED_PROVIDER;
  return [passport.provider, passport.model].filter((x) => x !== null && x !== '').join('/') || '-';
}
