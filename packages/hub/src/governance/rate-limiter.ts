import type { RateBlock } from '@ag2net/protocol';

interface Bucket {
  tokens: number;
  /** When `tokens` was last brought up to date, ms. */
  at: number;
}

/** The answer of `take`: admitted, or refused with the wait until a token is free. */
export type RateVerdict = { readonly ok: true } | { readonly ok: false; readonly retryAfterMs: number };

/**
 * One token bucket per sender over the envelopes it gets admitted (`Rule.limits.rate`, which AG2 declares but never
 * enforces): it holds `burst` tokens (`per_minute` when `burst` is 0), refills at `per_minute` per minute, and each
 * admitted envelope takes one. `per_minute: 0` is no limit. The rate is read at every take, so a new rule applies
 * at once; a bucket that shrank is cut to the new capacity.
 *
 * Buckets live in the active hub's memory: a failover starts every sender with a full bucket, which lets through
 * at most one extra burst per failover.
 */
export class RateLimiter {
  readonly #buckets = new Map<string, Bucket>();

  /** How many buckets it holds. */
  get size(): number {
    return this.#buckets.size;
  }

  /** Takes a token for `agentId` at `nowMs` if there is one. Synchronous, so concurrent posts cannot share one. */
  take(agentId: string, rate: RateBlock, nowMs: number): RateVerdict {
    if (rate.per_minute <= 0) {
      this.#buckets.delete(agentId);
      return { ok: true };
    }
    const capacity = rate.burst > 0 ? rate.burst : rate.per_minute;
    const bucket = this.#buckets.get(agentId) ?? { tokens: capacity, at: nowMs };
    // Multiply before dividing, so that whole seconds at whole rates give whole tokens.
    const tokens = Math.min(capacity, bucket.tokens + (Math.max(0, nowMs - bucket.at) * rate.per_minute) / 60_000);
    if (tokens < 1) {
      // A refusal leaves the bucket as it was: refill keeps counting from the last admission.
      return { ok: false, retryAfterMs: Math.ceil(((1 - tokens) * 60_000) / rate.per_minute) };
    }
    this.#buckets.set(agentId, { tokens: tokens - 1, at: Math.max(bucket.at, nowMs) });
    return { ok: true };
  }

  /** Gives back a token taken for an envelope that was then not admitted. */
  refund(agentId: string, rate: RateBlock): void {
    const bucket = this.#buckets.get(agentId);
    if (bucket === undefined || rate.per_minute <= 0) return;
    const capacity = rate.burst > 0 ? rate.burst : rate.per_minute;
    bucket.tokens = Math.min(capacity, bucket.tokens + 1);
  }

  /** Forgets an agent (unregistered). */
  forget(agentId: string): void {
    this.#buckets.delete(agentId);
  }
}
