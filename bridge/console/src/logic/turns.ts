import { z } from 'zod';
import type { Envelope } from '@ag2net/protocol';
import { EV_CHANNEL_OPENED, EV_PACKET, EV_TEXT, EV_TURN_FAILED, TurnReportSchema } from '@ag2net/protocol';
import { packetRouting } from './envelopes.js';
import { parseTime } from './time.js';

// A channel's turns as its log shows them. An agent answers the envelope that gave it the turn (its trigger) with
// `causation_id` = the trigger's id, and a failed turn says so with `ag2.turn.failed` caused by the trigger: a turn
// runs from the trigger's admission to its answer's, both stamped by the hub's clock. An answer posted by the agent
// runtime also carries its turn report (`event_data.turn`): how long the turn took by the agent's own clock, the model,
// the tokens it used, its attempts and retries and its tool calls. A failure says its `cause`, `attempts`, `provider`
// and `model` when the runtime sends them.

/** How a turn ended. */
export type TurnOutcome = 'answered' | 'handoff' | 'finish' | 'failed' | 'waiting';

/** What an `ag2.turn.failed` says. */
export interface TurnFailure {
  readonly code: string;
  readonly reason: string;
  /** The cause in one line, when the failure carries one. */
  readonly cause: string | null;
  /** Model calls made, the failed one included, when the failure says. */
  readonly attempts: number | null;
  /** The provider of the model that failed (`openai`, `scripted`, …), when the failure says. */
  readonly provider: string | null;
  /** The model that failed, when the failure says. */
  readonly model: string | null;
}

/** What an answer's turn report (`event_data.turn`) says: the agent runtime's own measure of its turn. */
export interface TurnReport {
  /** When the agent began the turn, epoch ms by its clock; `null` when the report's time does not parse. */
  readonly startedAt: number | null;
  /** How long the turn took by the agent's clock, in ms. */
  readonly durationMs: number;
  readonly provider: string;
  readonly model: string;
  /** Tokens in and out, when the provider reported them. */
  readonly usage: { readonly input: number; readonly output: number } | null;
  /** Requests made to the model, one per step, retries included. */
  readonly attempts: number;
  /** Of the attempts, those that repeated a failed request; `null` when the report does not say. */
  readonly retries: number | null;
  /** Tools the model called; `null` when the report does not say. */
  readonly toolCalls: number | null;
}

/** One turn of the timeline. */
export interface TurnRow {
  /** Unique in the timeline: the answer's sequence, or `waiting`. */
  readonly key: string;
  readonly speakerId: string;
  /** The envelope that gave the speaker the turn (`null`: none in the log the caller reads). */
  readonly trigger: { readonly sequence: number | null; readonly senderId: string; readonly label: string } | null;
  /** When the trigger was admitted, epoch ms. */
  readonly startedAt: number | null;
  /** When the answer (or the failure) was admitted, epoch ms; `null` while waiting. */
  readonly endedAt: number | null;
  readonly answerSequence: number | null;
  readonly outcome: TurnOutcome;
  /** A packet's handoff or finish tool. */
  readonly tool: string | null;
  readonly failure: TurnFailure | null;
  /** The answer's turn report, when the agent's runtime sent one (and it reads). */
  readonly report: TurnReport | null;
}

function str(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

const RecordSchema = z.record(z.string(), z.unknown());

function record(value: unknown): Readonly<Record<string, unknown>> | null {
  const parsed = RecordSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/**
 * A failure's `cause` in one line: text as it is; the agent runtime's object (`kind`, `exc_type`, `status`, `code`,
 * `message`) as its kind, then `401 invalid_api_key: message` the way the runtime's logs say it.
 */
export function causeLine(cause: unknown): string | null {
  const text = str(cause);
  if (text !== null) return text;
  const fields = record(cause);
  if (fields === null) return null;
  const kind = str(fields['kind']) ?? str(fields['exc_type']) ?? str(fields['type']) ?? str(fields['name']);
  const status = typeof fields['status'] === 'number' ? String(fields['status']) : null;
  const head = [status, str(fields['code'])].filter((p) => p !== null).join(' ');
  const message = str(fields['message']) ?? str(fields['reason']) ?? str(fields['detail']);
  // A connection's message starts with its code already (`ECONNREFUSED 127.0.0.1:9`).
  const line =
    head === '' ? message : message === null || message.startsWith(head) ? (message ?? head) : `${head}: ${message}`;
  const parts = [kind, line].filter((p) => p !== null);
  return parts.length === 0 ? null : parts.join(': ');
}

/** What an `ag2.turn.failed` envelope says. */
export function failureOf(envelope: Pick<Envelope, 'event_data'>): TurnFailure {
  const data = envelope.event_data;
  const attempts = data['attempts'];
  return {
    code: str(data['code']) ?? '',
    reason: str(data['reason']) ?? '',
    cause: causeLine(data['cause']),
    attempts: typeof attempts === 'number' && Number.isInteger(attempts) && attempts > 0 ? attempts : null,
    provider: str(data['provider']),
    model: str(data['model']),
  };
}

/** The turn report of an answer (`event_data.turn`, `TurnReportSchema`), or `null` when it has none or one that does not read. */
export function reportOf(envelope: Pick<Envelope, 'event_data'>): TurnReport | null {
  const parsed = TurnReportSchema.safeParse(envelope.event_data['turn']);
  if (!parsed.success) return null;
  const turn = parsed.data;
  return {
    startedAt: parseTime(turn.started_at),
    durationMs: turn.duration_ms,
    provider: turn.provider,
    model: turn.model,
    usage: turn.usage === undefined ? null : { input: turn.usage.input_tokens, output: turn.usage.output_tokens },
    attempts: turn.attempts,
    retries: turn.retries ?? null,
    toolCalls: turn.tool_calls ?? null,
  };
}

function isMessage(e: Envelope): boolean {
  return e.event_type === EV_TEXT || e.event_type === EV_PACKET;
}

function triggerLabel(e: Envelope): string {
  if (e.event_type === EV_CHANNEL_OPENED) return 'channel opened';
  if (isMessage(e)) return `#${e.sequence ?? '?'}`;
  return e.event_type;
}

/**
 * The turns of a channel, in log order: one per message (text or packet) and per failed turn, each from its trigger
 * (its `causation_id`, else the message or channel opening before it) to itself. `waitingFor`: the agent whose turn it
 * is now, shown last as waiting since the last message.
 */
export function turnsOf(envelopes: readonly Envelope[], waitingFor: string | null): TurnRow[] {
  const ordered = [...envelopes].sort((a, b) => (a.sequence ?? 0) - (b.sequence ?? 0));
  const byId = new Map(ordered.filter((e) => e.envelope_id !== '').map((e) => [e.envelope_id, e]));
  const rows: TurnRow[] = [];
  /** The last message or channel opening seen so far: what a turn without a causation answers. */
  let cue: Envelope | null = null;
  for (const e of ordered) {
    const failed = e.event_type === EV_TURN_FAILED;
    if (isMessage(e) || failed) {
      const caused = e.causation_id === null ? undefined : byId.get(e.causation_id);
      const trigger = caused ?? cue;
      const routing = packetRouting(e);
      rows.push({
        key: String(e.sequence ?? e.envelope_id),
        speakerId: e.sender_id,
        trigger:
          trigger === null
            ? null
            : { sequence: trigger.sequence ?? null, senderId: trigger.sender_id, label: triggerLabel(trigger) },
        startedAt: trigger === null ? null : parseTime(trigger.created_at),
        endedAt: parseTime(e.created_at),
        answerSequence: e.sequence ?? null,
        outcome: failed
          ? 'failed'
          : routing?.kind === 'handoff'
            ? 'handoff'
            : routing?.kind === 'finish'
              ? 'finish'
              : 'answered',
        tool: routing === null || routing.tool === '' ? null : routing.tool,
        failure: failed ? failureOf(e) : null,
        report: failed ? null : reportOf(e),
      });
    }
    if (isMessage(e) || e.event_type === EV_CHANNEL_OPENED) cue = e;
  }
  if (waitingFor !== null) {
    rows.push({
      key: 'waiting',
      speakerId: waitingFor,
      trigger:
        cue === null ? null : { sequence: cue.sequence ?? null, senderId: cue.sender_id, label: triggerLabel(cue) },
      startedAt: cue === null ? null : parseTime(cue.created_at),
      endedAt: null,
      answerSequence: null,
      outcome: 'waiting',
      tool: null,
      failure: null,
      report: null,
    });
  }
  return rows;
}

/** How long a turn took from its trigger's admission to its answer's (or until `now`, while waiting), in ms. */
export function turnDuration(row: TurnRow, now: number): number | null {
  if (row.startedAt === null) return null;
  return Math.max(0, (row.endedAt ?? now) - row.startedAt);
}

/**
 * How long a turn took, and by whose clock: the agent's own measure when its answer carries a report (`agent`), else
 * from the trigger's admission to the answer's on the hub's clock (`hub`); `null` when neither is known.
 */
export function turnTime(row: TurnRow, now: number): { readonly ms: number; readonly source: 'agent' | 'hub' } | null {
  if (row.report !== null) return { ms: row.report.durationMs, source: 'agent' };
  const ms = turnDuration(row, now);
  return ms === null ? null : { ms, source: 'hub' };
}

/** The provider of the scripted model: canned lines, offline, no language model called. */
export const SCRIPTED_PROVIDER = 'scripted';

/** Whether a passport's or a report's provider is the scripted model's. */
export function isScripted(provider: string | null): boolean {
  return provider === SCRIPTED_PROVIDER;
}

/** A model for display: `provider / model`, or the model alone when the provider is not known or is its own name. */
export function modelLabel(provider: string | null, model: string | null): string | null {
  if (model === null) return provider;
  return provider === null || provider === model ? model : `${provider} / ${model}`;
}

/** The model that answered (or failed) in a turn: the report's, else the failure's; `null` when neither says. */
export function turnModel(row: TurnRow): { readonly provider: string | null; readonly model: string | null } | null {
  if (row.report !== null) return { provider: row.report.provider, model: row.report.model };
  if (row.failure !== null && (row.failure.model !== null || row.failure.provider !== null)) {
    return { provider: row.failure.provider, model: row.failure.model };
  }
  return null;
}

/** A turn's model calls: attempts and retries from its report, or from its failure (the failed call's retries). */
export function turnAttempts(row: TurnRow): { readonly attempts: number; readonly retries: number | null } | null {
  if (row.report !== null) return { attempts: row.report.attempts, retries: row.report.retries };
  if (row.failure?.attempts === null || row.failure === null) return null;
  return { attempts: row.failure.attempts, retries: row.failure.attempts - 1 };
}

/**
 * What a failure says besides its reason and cause: `after 3 attempts · openai / gpt-4.1-mini`, the attempts left out
 * when the reason says them already (`the model could not be reached after 3 attempts`); `''` when it says neither.
 */
export function failureDetail(failure: TurnFailure): string {
  const tries =
    failure.attempts === null ? null : `after ${failure.attempts} ${failure.attempts === 1 ? 'attempt' : 'attempts'}`;
  const after = tries === null || failure.reason.includes(tries) ? null : tries;
  return [after, modelLabel(failure.provider, failure.model)].filter((p) => p !== null).join(' · ');
}

/** `312 → 54`: a turn's tokens in and out. */
export function tokensLabel(usage: { readonly input: number; readonly output: number }): string {
  return `${usage.input.toLocaleString('en-US')} → ${usage.output.toLocaleString('en-US')}`;
}
