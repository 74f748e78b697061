import { z } from 'zod';
import type { Envelope } from '../api-types.js';
import { EV_PACKET, EV_TEXT, EV_TURN_FAILED, packetRouting } from './envelopes.js';
import { parseTime } from './time.js';
import { EV_OPENED } from './live.js';

// A channel's turns as its log shows them. An agent answers the envelope that gave it the turn (its trigger) with
// `causation_id` = the trigger's id, and a failed turn says so with `ag2.turn.failed` caused by the trigger: a turn
// runs from the trigger's admission to its answer's, both stamped by the hub's clock. Nothing in the log says what
// the model used (tokens) or how often a call was retried, but a failure's own fields (`attempts`, `model`,
// `cause`) when the runtime sends them.

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
  /** The model that failed, when the failure says. */
  readonly model: string | null;
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
    model: str(data['model']),
  };
}

function isMessage(e: Envelope): boolean {
  return e.event_type === EV_TEXT || e.event_type === EV_PACKET;
}

function triggerLabel(e: Envelope): string {
  if (e.event_type === EV_OPENED) return 'channel opened';
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
      });
    }
    if (isMessage(e) || e.event_type === EV_OPENED) cue = e;
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
    });
  }
  return rows;
}

/** How long a turn took (or has taken, while waiting), in ms; `null` when its start is not known. */
export function turnDuration(row: TurnRow, now: number): number | null {
  if (row.startedAt === null) return null;
  return Math.max(0, (row.endedAt ?? now) - row.startedAt);
}
