import { isFinalError } from '@ag2net/protocol';

/** Default number of times a turn whose handler throws is run before it is reported and dropped. */
export const DEFAULT_MAX_TURN_ATTEMPTS = 5;
/** Default delay before the second attempt of a failed turn, in ms; doubled for every further attempt. */
export const DEFAULT_TURN_RETRY_BACKOFF_MS = 1_000;
/** Longest delay between two attempts of a failed turn, in ms. */
export const MAX_TURN_RETRY_DELAY_MS = 60_000;

/**
 * The client's turn-failure policy (`AgentClientOptions.isTransientFailure` by default): whether a turn whose handler
 * threw `error` is run again (transient) or reported at once through `onTurnFailed` (permanent), by what the error
 * says of itself:
 *
 * - a hub error: transient only when a client would resend it for a request that is not idempotent (`unavailable`,
 *   not marked `may_have_applied`); every other code is the hub refusing what the turn did (`isFinalError`);
 * - any other error that declares a boolean `retryable` (an ag2net error, by its code): as it declares;
 * - anything else (a timeout or no hub answering, a network error, a handler's own exception): transient, so bounded
 *   by `maxTurnAttempts` (conformance/fixtures/errors.json, `retry_local`).
 */
export function isTransientTurnFailure(error: unknown): boolean {
  if (isFinalError(error)) return false;
  if (error instanceof Error && 'retryable' in error && typeof error.retryable === 'boolean') return error.retryable;
  return true;
}

/**
 * Counts the failed attempts of each delivery (by envelope id) in this client, to bound redelivery of a handler
 * that keeps throwing. Remembers the latest `capacity` deliveries that failed and have not been settled. A turn whose
 * handler threw a final wire error (`isFinalError`) does not run again: no retry can change the hub's answer.
 */
export class TurnAttempts {
  readonly #failures = new Map<string, number>();

  constructor(
    private readonly maxAttempts = DEFAULT_MAX_TURN_ATTEMPTS,
    private readonly backoffMs = DEFAULT_TURN_RETRY_BACKOFF_MS,
    private readonly capacity = 10_000,
  ) {}

  /**
   * Records one more failed attempt of `envelopeId`: the delay before the next attempt in ms, or `null` when there is
   * none — this was the last allowed attempt, or `final` (the failure is one no retry can change) — and the count is
   * then forgotten. `attempts` is the number of failed attempts so far.
   */
  fail(
    envelopeId: string,
    options: { readonly final?: boolean } = {},
  ): { readonly attempts: number; readonly retryInMs: number | null } {
    const attempts = (this.#failures.get(envelopeId) ?? 0) + 1;
    this.#failures.delete(envelopeId);
    if (options.final === true || attempts >= this.maxAttempts) return { attempts, retryInMs: null };
    this.#failures.set(envelopeId, attempts);
    if (this.#failures.size > this.capacity) {
      const oldest = this.#failures.keys().next();
      if (oldest.done !== true) this.#failures.delete(oldest.value);
    }
    return { attempts, retryInMs: Math.min(this.backoffMs * 2 ** (attempts - 1), MAX_TURN_RETRY_DELAY_MS) };
  }

  /** The delivery succeeded (or was given up): forget its count. */
  settled(envelopeId: string): void {
    this.#failures.delete(envelopeId);
  }

  /** Failed attempts recorded for `envelopeId`. */
  count(envelopeId: string): number {
    return this.#failures.get(envelopeId) ?? 0;
  }
}
