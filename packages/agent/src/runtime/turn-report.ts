import {
  MAX_TURN_REPORT_COUNT,
  MAX_TURN_REPORT_DURATION_MS,
  MAX_TURN_REPORT_TOKENS,
  type TurnReport,
} from '@ag2net/protocol';
import type { AskResult } from '../agent.js';

/** What a turn measured, for `turnReport`. */
export interface TurnMeasures {
  /** When the turn began, epoch ms. */
  readonly startedAt: number;
  /** How long it took until its answer was ready to post, in ms. */
  readonly durationMs: number;
  /** The model that answered, as the passport names it (`modelIdentity`). */
  readonly model: { readonly provider: string; readonly model: string };
  /** What the model call reported. */
  readonly reply: Pick<AskResult, 'usage' | 'usageReported' | 'attempts' | 'retries' | 'toolCalls'>;
}

/**
 * The `turn` of an answer's `event_data` (`TurnReportSchema`): timing, model, tokens, attempts, retries and tool
 * calls, each clamped to the schema's bounds so that the hub admits it. Nothing from the prompt or the answer.
 */
export function turnReport(measures: TurnMeasures): TurnReport {
  const { reply, model } = measures;
  const count = (n: number, min: number): number => clamp(n, min, MAX_TURN_REPORT_COUNT);
  const tokens = (n: number): number => clamp(n, 0, MAX_TURN_REPORT_TOKENS);
  return {
    started_at: new Date(measures.startedAt).toISOString(),
    duration_ms: clamp(measures.durationMs, 0, MAX_TURN_REPORT_DURATION_MS),
    provider: model.provider.slice(0, 128) || 'unknown',
    model: model.model.slice(0, 256) || 'unknown',
    ...(reply.usageReported
      ? { usage: { input_tokens: tokens(reply.usage.inputTokens), output_tokens: tokens(reply.usage.outputTokens) } }
      : {}),
    attempts: count(reply.attempts, 1),
    retries: count(reply.retries, 0),
    tool_calls: count(reply.toolCalls, 0),
  };
}

/** `n` rounded to an integer within `[min, max]`; `min` for what is not a finite number. */
function clamp(n: number, min: number, max: number): number {
  return Number.isFinite(n) ? Math.min(max, Math.max(min, Math.round(n))) : min;
}
