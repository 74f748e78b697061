import type { HubNames } from '@ag2net/protocol';
import { JetStreamApiCodes, JetStreamApiError, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { headers } from '@nats-io/transport-node';
import { ForeignWait, KV_OPERATION_HEADER } from './lease-foreign.js';
import { RELEASE_OPERATION, heldValue, readLeaseValue, releasedValue, type ObservedHolder } from './lease-record.js';

export type { ObservedHolder } from './lease-record.js';

/** Share of the lease time, before the server can expire the lease, after which the holder stops writing. */
export const LEASE_SAFETY_MARGIN = 0.2;

/** What a `Lease` is: its bucket, where it reads and writes, and which hub holds it. */
export interface LeaseOptions {
  /** The `<PREFIX>_leases` bucket. */
  readonly kv: KV;
  readonly jsm: JetStreamManager;
  readonly names: HubNames;
  /** This hub's id, the value it writes at the key. */
  readonly holderId: string;
  /** The lease's key in the bucket (`HubNames.leaseKey`); default `active`, the lease of a hub with one partition. */
  readonly key?: string;
  /** Monotonic clock in ms; default `performance.now()`. Test seam. */
  readonly now?: () => number;
  /**
   * Told once of each revision of the key whose value no hub wrote (see `LeaseValue`), by a holder or a standby, with
   * the key's subject; never given the value. Default nothing.
   */
  readonly onForeign?: (foreign: { readonly key: string; readonly revision: number }) => void;
}

/**
 * The single-writer lease: a key in the `<PREFIX>_leases` bucket whose TTL (`max_age`) is the lease time. A CAS write
 * on the key's last revision (0 when it has none) acquires it (safe under races, also on R3), `kv.update` with the
 * last revision renews it (only the holder can), and a CAS write of the hub's release (`release`) gives it up: the
 * next hub takes a released key over at once with a CAS write on that revision, so no purge is needed. The revision
 * at acquisition is the fencing epoch stamped into every WAL message.
 *
 * Validity is judged by the holder's own monotonic clock, never by reading the key: the server stamps a write no
 * earlier than the moment the holder sent it, so it cannot expire the key before (send time + TTL). The holder
 * therefore counts itself valid until (start of its last successful acquire or renew + TTL − margin); the margin
 * (20 % of the TTL) absorbs clock-rate drift and the time between the holder's check and its write reaching the
 * server. `holds()` is what every WAL append checks first.
 *
 * Only what a hub writes counts (`readLeaseValue`): its id while it holds the lease, its release. Anything else at
 * the key (anyone's message published on the key's subject) is foreign: it moves the key's revision and, being a
 * write, keeps the key from expiring, but it is nobody's lease. A holder that meets one while its lease is valid
 * writes its own record over it (CAS on the foreign revision, same epoch); a standby takes the key over only once it
 * has seen nothing but foreign values there for a whole lease time (`tryAcquire`).
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
  /** The newest revision a write of this lease stored, in whatever term: what `release` frees; 0 once released. */
  #written = 0;
  /** Renewals not answered yet: `release` waits for them, so that it frees the newest of this hub's writes. */
  readonly #renewals = new Set<Promise<unknown>>();
  /** A standby's wait through foreign values at the key (`ForeignWait`). */
  readonly #foreign: ForeignWait;
  /** The newest foreign revision told to `onForeign`. */
  #reported = 0;
  /** A standby's last read of another hub's record at the key (`observedHolder`). */
  #observed: ObservedHolder | null = null;
  /**
   * `now()` at which the holder's connection went down (`suspend`), until a renewal sent after it succeeds; `null`
   * when not suspended.
   */
  #suspendedAt: number | null = null;
  readonly #now: () => number;
  readonly #onForeign: NonNullable<LeaseOptions['onForeign']>;
  readonly #value: string;
  readonly #js: JetStreamClient;

  private readonly kv: KV;
  private readonly names: HubNames;
  private readonly holderId: string;
  /** The key this lease is held at. */
  readonly key: string;

  constructor(options: LeaseOptions) {
    const { jsm } = options;
    this.key = options.key ?? 'active';
    this.kv = options.kv;
    this.names = options.names;
    this.holderId = options.holderId;
    this.#now = options.now ?? (() => performance.now());
    this.#onForeign = options.onForeign ?? (() => undefined);
    this.#value = heldValue(this.holderId);
    this.#js = jsm.jetstream();
    this.#foreign = new ForeignWait(jsm, `KV_${this.names.leasesBucket}`, this.#keySubject());
  }

  /**
   * Tries to take the lease; returns the epoch, or `null` when it is not free for this hub now. On success the lease
   * is valid until the start of the acquiring write plus the bucket's TTL (read here, so that whatever TTL this hub
   * was configured with, the one the bucket really has counts).
   *
   * Free are: no value (expired, or purged by a hub of an older version), a hub's release, and a foreign value that
   * this standby has seen, with nothing but foreign values after it, for a whole lease time. That last one is
   * safe: a live holder writes its own record over a foreign value at its next renewal (a sixth of the lease later)
   * while its lease is valid, and this standby either reads that record, or finds a revision it did not see gone
   * from the key (`ForeignWait`); either starts the wait again. A whole lease time of foreign values with no
   * gap therefore means the holder's last write came before the first of them, so its validity (that write's start
   * plus 80 % of the lease, by its clock) ended before this standby's wait did (with the 20 % margin for the two
   * clocks' rates, as for the key's own expiry). The take-over is a CAS on the revision read last, so a holder's
   * record written meanwhile makes it fail.
   */
  async tryAcquire(): Promise<number | null> {
    const ttlMs = (await this.kv.status()).ttl;
    const entry = await this.kv.get(this.key);
    const seenAt = this.#now();
    const value = readLeaseValue(entry);
    let expected: number;
    this.#observed = value.kind === 'held' && entry !== null ? { hubId: value.hubId, revision: entry.revision } : null;
    switch (value.kind) {
      case 'held':
        this.#foreign.reset();
        return null;
      case 'absent':
        this.#foreign.reset();
        expected = 0;
        break;
      case 'released':
        this.#foreign.reset();
        expected = entry?.revision ?? 0;
        break;
      case 'foreign': {
        expected = entry?.revision ?? 0;
        this.#noteForeign(expected);
        if (!(await this.#foreign.wholeLease(expected, seenAt, ttlMs))) return null;
        break;
      }
      default:
        return exhaustive(value);
    }
    return this.#acquireAt(expected, ttlMs);
  }

  /**
   * The other hub whose record `tryAcquire` last found at the key, with that record's revision; `null` when the last
   * attempt found none (or this hub holds the lease).
   */
  observedHolder(): ObservedHolder | null {
    return this.#observed;
  }

  /**
   * Takes the lease over from a holder whose NATS connection is gone (`HubPresence`), without waiting for its record
   * to expire: a CAS write on `holder.revision`, the revision of the holder's record the caller saw gone. It fails
   * (`null`) when the key moved since, e.g. the holder renewed. Safe because a holder whose connection went down
   * suspends its lease (`suspend`) until a renewal, a CAS on its own revision, succeeds again: after this write none
   * can, so the former holder serves nothing more (see docs/architecture.md, "Seeing a hub's death").
   */
  async takeOver(holder: ObservedHolder): Promise<number | null> {
    const ttlMs = (await this.kv.status()).ttl;
    this.#observed = null;
    return this.#acquireAt(holder.revision, ttlMs);
  }

  /** The acquiring CAS write on `expected` (0: the key must have no value); the epoch, or `null` when it moved. */
  async #acquireAt(expected: number, ttlMs: number): Promise<number | null> {
    const start = this.#now();
    try {
      const revision = await this.kv.put(this.key, this.#value, { previousSeq: expected });
      this.#term += 1;
      this.#revision = revision;
      this.#written = revision;
      this.#ttlMs = ttlMs;
      this.#validUntil = ttlMs > 0 ? start + ttlMs : Number.POSITIVE_INFINITY;
      this.#held = true;
      this.#uncertain = false;
      this.#foreign.reset();
      this.#observed = null;
      this.#suspendedAt = null;
      return revision;
    } catch (err) {
      if (isWrongLastSequence(err)) return null;
      if (err instanceof Error && /wrong last sequence|key exists/i.test(err.message)) return null;
      throw err;
    }
  }

  /**
   * The holder's NATS connection went down: `holds()` is false from now until a renewal sent after this call
   * succeeds. While the connection is down a standby may see this hub gone and take the lease over (`takeOver`);
   * the renewal, a CAS on this hub's revision, then fails and the term ends, and until then this hub writes and
   * serves nothing. A renewal that succeeds proves nobody took the lease over. No-op when not held.
   */
  suspend(): void {
    if (this.#held) this.#suspendedAt = this.#now();
  }

  /** Whether the lease is suspended by a connection loss and not yet renewed since. */
  suspended(): boolean {
    return this.#held && this.#suspendedAt !== null;
  }

  /**
   * Extends the lease from the start of this attempt. `lost` only when it is definitely gone (its revision moved to
   * another hub's record, or the key was purged or released); `unknown` when the request failed or timed out, in
   * which case the caller keeps serving while `holds()` is true. A foreign value at the key is written over, not a
   * loss (see the class).
   */
  renew(): Promise<'renewed' | 'lost' | 'unknown'> {
    const renewal = this.#renew();
    this.#renewals.add(renewal);
    const settled = (): void => void this.#renewals.delete(renewal);
    void renewal.then(settled, settled);
    return renewal;
  }

  async #renew(): Promise<'renewed' | 'lost' | 'unknown'> {
    if (!this.#held) return 'lost';
    const term = this.#term;
    const start = this.#now();
    try {
      const revision = await this.kv.update(this.key, this.#value, this.#revision);
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
    return this.#suspendedAt === null && this.#validByClock();
  }

  /** Held and before the local deadline, whether or not suspended. */
  #validByClock(): boolean {
    return this.#held && this.#now() < this.deadline();
  }

  /**
   * Held, and not past the start of its last success plus the TTL: the server cannot have expired the key yet, so a
   * renewal may still find this holder's revision there (see `RenewableLease.renewable`).
   */
  renewable(): boolean {
    return this.#held && this.#now() < this.#validUntil;
  }

  /** `now()` until which `holds()` is true (`-Infinity` when not held). */
  deadline(): number {
    if (!this.#held) return Number.NEGATIVE_INFINITY;
    return this.#validUntil - this.#ttlMs * LEASE_SAFETY_MARGIN;
  }

  /**
   * Gives the lease up so that a standby takes over at once: this hub's release (a delete marker carrying its
   * `released` record, which needs no purge), written by CAS on this hub's newest write after the renewals in flight
   * answered, so that it frees nothing but this hub's own lease. `holds()` is false from the call on. A key that moved
   * on since (another holder, a foreign value) is left alone.
   */
  async release(): Promise<void> {
    this.#held = false;
    this.#suspendedAt = null;
    this.#term += 1;
    this.#validUntil = 0;
    await Promise.all(this.#renewals);
    const revision = this.#written;
    if (revision === 0) return;
    try {
      await this.#writeRelease(revision);
      this.#written = 0;
      return;
    } catch (err) {
      if (!isWrongLastSequence(err)) throw err;
    }
    // After a renewal that got no answer the server may have stored it: this hub's record at a newer revision is then
    // its own (as `#afterWrongRevision` reasons), and is what to release.
    const entry = this.#uncertain ? await this.kv.get(this.key) : null;
    const value = readLeaseValue(entry);
    this.#written = 0;
    if (entry === null || value.kind !== 'held' || value.hubId !== this.holderId || entry.revision <= revision) return;
    try {
      await this.#writeRelease(entry.revision);
    } catch (err) {
      if (!isWrongLastSequence(err)) throw err;
    }
  }

  /**
   * Writes this hub's release by CAS on `revision`. A delete marker, so that `kv.create` (and hubs of older versions,
   * which acquire with it) take the key as free too; its payload says which hub released, since any other marker is
   * not a hub's.
   */
  async #writeRelease(revision: number): Promise<void> {
    const h = headers();
    h.set(KV_OPERATION_HEADER, RELEASE_OPERATION);
    await this.#js.publish(this.#keySubject(), releasedValue(this.holderId), {
      headers: h,
      expect: { lastSubjectSequence: revision },
    });
  }

  /** The current holder's id, or `null` (free, or a value no hub wrote). */
  async holder(): Promise<string | null> {
    const value = readLeaseValue(await this.kv.get(this.key));
    return value.kind === 'held' ? value.hubId : null;
  }

  #renewed(term: number, start: number, revision: number): 'renewed' | 'lost' {
    this.#written = Math.max(this.#written, revision);
    if (term !== this.#term || !this.#held) return 'lost';
    this.#revision = revision;
    if (this.#suspendedAt !== null && start > this.#suspendedAt) this.#suspendedAt = null;
    this.#validUntil = Math.max(this.#validUntil, this.#ttlMs > 0 ? start + this.#ttlMs : Number.POSITIVE_INFINITY);
    this.#uncertain = false;
    return 'renewed';
  }

  /**
   * The key's revision is not ours. A foreign value there is written over (`#reassert`). After a renewal whose answer
   * was lost the server may have stored it: if the key still holds this hub's id at a newer revision, that was our
   * own renewal; adopt it and renew once more (the adopted write proves nothing about when it happened, so only a
   * fresh success extends validity). Anything else (another hub's record, a release, no value) is a loss.
   */
  async #afterWrongRevision(term: number): Promise<'renewed' | 'lost' | 'unknown'> {
    try {
      const entry = await this.kv.get(this.key);
      if (term !== this.#term || !this.#held) return 'lost';
      const value = readLeaseValue(entry);
      if (entry !== null && value.kind === 'foreign') return await this.#reassert(term, entry.revision);
      if (!this.#uncertain) return this.#lose();
      if (entry === null || value.kind !== 'held' || value.hubId !== this.holderId) return this.#lose();
      if (entry.revision <= this.#revision) return this.#lose();
      this.#revision = entry.revision;
      const start = this.#now();
      const revision = await this.kv.update(this.key, this.#value, this.#revision);
      return this.#renewed(term, start, revision);
    } catch (err) {
      if (term !== this.#term || !this.#held) return 'lost';
      return isWrongLastSequence(err) ? this.#lose() : 'unknown';
    }
  }

  /**
   * Writes this hub's record over a foreign value at `revision` while the lease is valid by this hub's clock, keeping
   * the term and its epoch; a success renews the lease from its start like any renewal. Had a standby taken the key
   * over meanwhile, this CAS would fail; and a standby that sees this write, or finds its revision gone, waits a whole
   * lease time of foreign values again (`tryAcquire`), longer than the validity this write gives. A CAS that fails
   * because something else was written first is `unknown`: the next renewal looks at the key again.
   */
  async #reassert(term: number, revision: number): Promise<'renewed' | 'lost' | 'unknown'> {
    this.#noteForeign(revision);
    // A suspension does not matter here: the CAS below fails if a standby took the key over.
    if (!this.#validByClock()) return this.#lose();
    const start = this.#now();
    try {
      return this.#renewed(term, start, await this.kv.update(this.key, this.#value, revision));
    } catch (err) {
      if (term !== this.#term || !this.#held) return 'lost';
      if (!isWrongLastSequence(err)) this.#uncertain = true;
      return 'unknown';
    }
  }

  /** Tells `onForeign` of a foreign revision once, whoever (holder or standby) met it first. */
  #noteForeign(revision: number): void {
    if (revision <= this.#reported) return;
    this.#reported = revision;
    this.#onForeign({ key: this.#keySubject(), revision });
  }

  #keySubject(): string {
    return `$KV.${this.names.leasesBucket}.${this.key}`;
  }

  #lose(): 'lost' {
    this.#held = false;
    this.#suspendedAt = null;
    this.#validUntil = 0;
    return 'lost';
  }
}

function exhaustive(value: never): never {
  throw new Error(`unexpected lease value ${JSON.stringify(value)}`);
}

function isWrongLastSequence(err: unknown): boolean {
  return (
    err instanceof JetStreamApiError &&
    (err.code === JetStreamApiCodes.StreamWrongLastSequence ||
      err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}
