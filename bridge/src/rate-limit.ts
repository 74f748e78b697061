/**
 * A token bucket per key (a session token, or the client address for unauthenticated requests): `perMinute`
 * requests a minute on average, bursts up to `burst`. Per replica: N replicas admit up to N times the rate.
 */
export class RateLimiter {
  readonly #perMs: number;
  readonly #burst: number;
  readonly #buckets = new Map<string, { tokens: number; atMs: number }>();

  constructor(options: { readonly perMinute: number; readonly burst: number }) {
    this.#perMs = options.perMinute / 60_000;
    this.#burst = options.burst;
  }

  /** Takes one token for `key` at `nowMs`; false when its bucket is empty. */
  take(key: string, nowMs: number): boolean {
    const bucket = this.#buckets.get(key) ?? { tokens: this.#burst, atMs: nowMs };
    bucket.tokens = Math.min(this.#burst, bucket.tokens + (nowMs - bucket.atMs) * this.#perMs);
    bucket.atMs = nowMs;
    if (this.#buckets.size > 100_000) this.#evictFull(nowMs);
    this.#buckets.set(key, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  /** Drops buckets that refilled completely: they hold nothing a fresh bucket would not. */
  #evictFull(nowMs: number): void {
    for (const [key, b] of this.#buckets) {
      if (b.tokens + (nowMs - b.atMs) * this.#perMs >= this.#burst) this.#buckets.delete(key);
    }
  }
}
