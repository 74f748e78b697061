import type { HubNames } from '@ag2net/protocol';
import { JetStreamApiCodes, JetStreamApiError, type JetStreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';

const KEY = 'active';

/** Share of the lease time, before the server can expire the lease, after which the holder stops writing. */
export const LEASE_SAFETY_MARGIN = 0.2;

/** Test seams of `Lease`. */
export interface LeaseOptions {
  /** Monotonic clock in ms; default `performance.now()`. */
  readonly now?: () => number;
}

/**
 * The single-writer lease: a key in the `<PREFIX>_leases` bucket whose TTL (`max_age`) is the lease time. `kv.create`
 * acquires it (safe under races, also on R3), `kv.update` with the last revision renews it (only the holder can), and
 * a stream purge releases it (a KV delete would leave a marker that turns the next create into an update). The
 * revision at acquisition is the fencing epoch stamped into every WAL message.
 *
 * Validity is judged by the holder's own monotonic clock, never by reading the key: the server stamps a write no
 * earlier than the moment the holder sent it, so it cannot expire the key before (send time + TTL). The holder
 * therefore counts itself valid until (start of its last successful acquire or renew + TTL − margin); the margin
 * (20 % of the TTL) absorbs clock-rate drift and the time between the holder's check and its write reaching the
 * server. `holds()` is what every WAL append checks first.
 */
export class Lease {
  #revision = 0;
  /** `now()` until which the lease is valid (before the margin); 0 when not held. */
  #validUntil = 0;
  #ttlMs = 0;
  #held = false;
  /** Incremented by every acquisition and release: a renewal that answers after its term ended changes nothing. */
  #term = 0;
  /** A renewal failed without an answer since the last success: the server may have stored it. */
  #uncertain = false;
  readonly #now: () => number;

  constructor(
    private readonly kv: KV,
    private readonly jsm: JetStreamManager,
    private readonly names: HubNames,
    private readonly holderId: string,
    options: LeaseOptions = {},
  ) {
    this.#now = options.now ?? (() => performance.now());
  }

  /**
   * Tries to take the lease; returns the epoch, or `null` when another hub holds it. On success the lease is valid
   * until the start of this attempt plus the bucket's TTL (read here, so that whatever TTL this hub was configured
   * with, the one the bucket really has counts).
   */
  async tryAcquire(): Promise<number | null> {
    const ttlMs = (await this.kv.status()).ttl;
    const start = this.#now();
    try {
      const revision = await this.kv.create(KEY, this.holderId);
      this.#term += 1;
      this.#revision = revision;
      this.#ttlMs = ttlMs;
      this.#validUntil = ttlMs > 0 ? start + ttlMs : Number.POSITIVE_INFINITY;
      this.#held = true;
      this.#uncertain = false;
      return revision;
    } catch (err) {
      if (isWrongLastSequence(err)) return null;
      if (err instanceof Error && /wrong last sequence|key exists/i.test(err.message)) return null;
      throw err;
    }
  }

  /**
   * Extends the lease from the start of this attempt. `lost` only when it is definitely gone (its revision moved:
   * expired and taken, purged, or released); `unknown` when the request failed or timed out, in which case the caller
   * keeps serving while `holds()` is true.
   */
  async renew(): Promise<'renewed' | 'lost' | 'unknown'> {
    if (!this.#held) return 'lost';
    const term = this.#term;
    const start = this.#now();
    try {
      const revision = await this.kv.update(KEY, this.holderId, this.#revision);
      return this.#renewed(term, start, revision);
    } catch (err) {
      if (term !== this.#term || !this.#held) return 'lost';
      if (!isWrongLastSequence(err)) {
        this.#uncertain = true;
        return 'unknown';
      }
      return this.#afterWrongRevision(term);
    }
  }

  /** True while this hub may write: the lease was acquired or renewed and its local deadline has not passed. */
  holds(): boolean {
    return this.#held && this.#now() < this.deadline();
  }

  /** `now()` until which `holds()` is true (`-Infinity` when not held). */
  deadline(): number {
    if (!this.#held) return Number.NEGATIVE_INFINITY;
    return this.#validUntil - this.#ttlMs * LEASE_SAFETY_MARGIN;
  }

  /** Gives the lease up so that a standby takes over at once. `holds()` is false from the call on. */
  async release(): Promise<void> {
    this.#held = false;
    this.#term += 1;
    this.#validUntil = 0;
    const entry = await this.kv.get(KEY);
    if (entry === null || entry.string() !== this.holderId) return;
    await this.jsm.streams.purge(`KV_${this.names.leasesBucket}`, { filter: `$KV.${this.names.leasesBucket}.${KEY}` });
  }

  /** The current holder's id, or `null`. */
  async holder(): Promise<string | null> {
    const entry = await this.kv.get(KEY);
    return entry === null || entry.operation !== 'PUT' ? null : entry.string();
  }

  #renewed(term: number, start: number, revision: number): 'renewed' | 'lost' {
    if (term !== this.#term || !this.#held) return 'lost';
    this.#revision = revision;
    this.#validUntil = Math.max(this.#validUntil, this.#ttlMs > 0 ? start + this.#ttlMs : Number.POSITIVE_INFINITY);
    this.#uncertain = false;
    return 'renewed';
  }

  /**
   * The key's revision is not ours. After a renewal whose answer was lost the server may have stored it: if the key
   * still holds this hub's id at a newer revision, that was our own renewal; adopt it and renew once more (the
   * adopted write proves nothing about when it happened, so only a fresh success extends validity).
   */
  async #afterWrongRevision(term: number): Promise<'renewed' | 'lost' | 'unknown'> {
    if (!this.#uncertain) return this.#lose();
    try {
      const entry = await this.kv.get(KEY);
      if (term !== this.#term || !this.#held) return 'lost';
      if (entry === null || entry.operation !== 'PUT' || entry.string() !== this.holderId) return this.#lose();
      if (entry.revision <= this.#revision) return this.#lose();
      this.#revision = entry.revision;
      const start = this.#now();
      const revision = await this.kv.update(KEY, this.holderId, this.#revision);
      return this.#renewed(term, start, revision);
    } catch (err) {
      if (term !== this.#term || !this.#held) return 'lost';
      return isWrongLastSequence(err) ? this.#lose() : 'unknown';
    }
  }

  #lose(): 'lost' {
    this.#held = false;
    this.#validUntil = 0;
    return 'lost';
  }
}

function isWrongLastSequence(err: unknown): boolean {
  return (
    err instanceof JetStreamApiError &&
    (err.code === JetStreamApiCodes.StreamWrongLastSequence ||
      err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}
