import { isIPv6 } from 'node:net';
import type { SessionClaims } from './session-tokens.js';

/** Most buckets a limiter keeps by default: past it, the one idle longest is dropped. */
export const DEFAULT_MAX_RATE_KEYS = 100_000;

interface Bucket {
  tokens: number;
  atMs: number;
}

/**
 * A token bucket per key: `perMinute` requests a minute on average, bursts up to `burst`. Per replica: N replicas
 * admit up to N times the rate.
 *
 * At most `maxKeys` buckets are kept, in the order they were last used: a bucket that refilled is dropped as soon as
 * it is the oldest, and past `maxKeys` the oldest is dropped even if it did not (it is the one idle longest, so the
 * nearest to full). Memory stays bounded however many people and addresses call.
 */
export class RateLimiter {
  readonly #perMs: number;
  readonly #burst: number;
  readonly #maxKeys: number;
  /** Least recently used first: a use moves a bucket to the end. */
  readonly #buckets = new Map<string, Bucket>();

  constructor(options: { readonly perMinute: number; readonly burst: number; readonly maxKeys?: number }) {
    this.#perMs = options.perMinute / 60_000;
    this.#burst = options.burst;
    this.#maxKeys = Math.max(1, options.maxKeys ?? DEFAULT_MAX_RATE_KEYS);
  }

  /** How many buckets are kept now. */
  get size(): number {
    return this.#buckets.size;
  }

  /**
   * Takes one token from the bucket of each key at `nowMs`, or none when any of them is empty: a request that two
   * budgets govern (a sign-in: its name's and its address's) is refused without spending the other's.
   */
  take(keys: string | readonly string[], nowMs: number): boolean {
    const list = typeof keys === 'string' ? [keys] : keys;
    const buckets = list.map((key) => this.#refilled(key, nowMs));
    const admitted = buckets.every((b) => b.tokens >= 1);
    if (admitted) for (const b of buckets) b.tokens -= 1;
    this.#trim(nowMs);
    return admitted;
  }

  /** The bucket of `key` refilled to `nowMs`, moved to the most recently used end. */
  #refilled(key: string, nowMs: number): Bucket {
    const bucket = this.#buckets.get(key) ?? { tokens: this.#burst, atMs: nowMs };
    bucket.tokens = Math.min(this.#burst, bucket.tokens + Math.max(0, nowMs - bucket.atMs) * this.#perMs);
    bucket.atMs = nowMs;
    this.#buckets.delete(key);
    this.#buckets.set(key, bucket);
    return bucket;
  }

  /** Drops the oldest buckets while they are full again or there are more than `maxKeys`: amortized O(1) a take. */
  #trim(nowMs: number): void {
    for (const [key, b] of this.#buckets) {
      const full = b.tokens + Math.max(0, nowMs - b.atMs) * this.#perMs >= this.#burst;
      if (!full && this.#buckets.size <= this.#maxKeys) return;
      this.#buckets.delete(key);
    }
  }
}

/**
 * The budget a request draws on: the person a verified session acts as (every token of one person shares it; the
 * operator's sessions are one), else the client's address. A token that does not verify is the address's: made-up
 * tokens must not buy fresh buckets (say, to guess API keys).
 */
export function rateKeyOf(claims: SessionClaims | null, address: string | undefined): string {
  if (claims === null) return addressKey(address);
  return claims.operator ? 'operator' : `person:${claims.sub}`;
}

/**
 * The budget of a client address: an IPv4 address as it is, an IPv6 address by its /64 (one host is usually given a
 * whole /64, so counting its addresses one by one would give it 2^64 budgets).
 */
export function addressKey(address: string | undefined): string {
  if (address === undefined || address === '') return 'addr:unknown';
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped?.[1] !== undefined) return `addr:${mapped[1]}`;
  if (!isIPv6(address)) return `addr:${address}`;
  return `addr:${ipv6Prefix64(address)}::/64`;
}

/** The first four groups of an IPv6 address, `::` expanded. */
function ipv6Prefix64(address: string): string {
  const [head = '', tail] = address.toLowerCase().split('%')[0]?.split('::') ?? [''];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  // An embedded IPv4 tail (`::1.2.3.4`) fills two groups; only the first four groups matter here.
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':');
}

/** Sign-ins allowed per person name and per client address: minting tokens costs a sign-in each. */
export class SignInLimiter {
  readonly #limiter: RateLimiter;

  constructor(options: { readonly perMinute: number; readonly burst: number; readonly maxKeys?: number }) {
    this.#limiter = new RateLimiter(options);
  }

  /** Takes one sign-in of `name` from `address` at `nowMs`; false when either has none left. */
  take(name: string, address: string | undefined, nowMs: number): boolean {
    return this.#limiter.take([`name:${name}`, addressKey(address)], nowMs);
  }
}
