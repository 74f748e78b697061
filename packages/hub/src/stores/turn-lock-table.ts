import { UnavailableError } from '@ag2net/protocol';
import { KeyedSerial, type HubRequestParsed } from '@ag2net/protocol/internal';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { Clock } from '../base/clock.js';
import type { Logger } from '../base/logger.js';
import { leaseLapsed } from '../nats/fenced-kv.js';
import { TurnLockRecordSchema, turnLockKey, type TurnLockRecord } from './turn-lock-record.js';

/** What `TurnLockTable` needs of the hub. */
export interface TurnLockTableOptions {
  /** The turn-lock bucket (`HubNames.turnLocksBucket`). */
  readonly kv: KV;
  /** Decides when a lock lapses: a lock written at `now()` lapses at `now() + ttl_ms`. */
  readonly clock: Clock;
  /** Asked before every write; `false` answers `UnavailableError` (this hub no longer holds the writer lease). */
  readonly mayWrite: () => boolean;
  readonly logger: Logger;
  /** Called for a stored value that is not a turn-lock record (not written by a hub); it is treated as free. */
  readonly onQuarantined: () => void;
}

/** A key as read: its last revision (0 when it never existed or was removed) and the live-or-lapsed lock in it. */
interface Current {
  readonly revision: number;
  readonly lock: TurnLockRecord | null;
}

/** What an operation does with the key it read. */
type Step =
  { readonly kind: 'put'; readonly record: TurnLockRecord } | { readonly kind: 'delete' } | { readonly kind: 'none' };

/** Conflicting writes of one key in a row before the hub answers `unavailable` (the client sends it again). */
const MAX_CAS_ATTEMPTS = 4;

/**
 * The turn locks of every (agent, channel), in a KV bucket only the hub writes. Each operation reads the key, decides
 * with the hub's clock, and writes with the revision it read (create with revision 0, update, or delete), so a write
 * based on a stale read fails and is decided again from a fresh read. The hub serializes operations per key, so on
 * nats-server 2.9 with R3 (where a revision-checked update is not serializable between concurrent writers, see the
 * hub's fencing notes) two of its own writes never race; only the hub holding the writer lease writes.
 *
 * A lock lapses `ttl_ms` after its last acquisition or renewal, by the clock of the hub that wrote it. The expiry is
 * in the stored value, so after a failover the new hub honours the locks its predecessor granted; hubs' clocks must
 * agree to well within a TTL.
 */
export class TurnLockTable {
  readonly #serial = new KeyedSerial();
  readonly #options: TurnLockTableOptions;

  constructor(options: TurnLockTableOptions) {
    this.#options = options;
  }

  /** Takes (or, held by `holder` already, renews) the lock; false while another holder's lock is alive. */
  acquire(agentId: string, request: HubRequestParsed<'acquireTurnLock'>): Promise<boolean> {
    const { holder, ttl_ms } = request;
    return this.#apply(turnLockKey(agentId, request.channel_id), (lock, now) =>
      lock === null || lock.holder === holder || lock.expires_at <= now
        ? { kind: 'put', record: { holder, ttl_ms, expires_at: now + ttl_ms } }
        : { kind: 'none' },
    );
  }

  /** Extends `holder`'s live lock by its TTL; false when it lapsed, was released or another holder has it. */
  renew(agentId: string, request: HubRequestParsed<'renewTurnLock'>): Promise<boolean> {
    return this.#apply(turnLockKey(agentId, request.channel_id), (lock, now) =>
      lock !== null && lock.holder === request.holder && lock.expires_at > now
        ? { kind: 'put', record: { ...lock, expires_at: now + lock.ttl_ms } }
        : { kind: 'none' },
    );
  }

  /** Frees the lock if `holder` has it (live or lapsed); otherwise does nothing. */
  async release(agentId: string, request: HubRequestParsed<'releaseTurnLock'>): Promise<void> {
    await this.#apply(turnLockKey(agentId, request.channel_id), (lock) =>
      lock !== null && lock.holder === request.holder ? { kind: 'delete' } : { kind: 'none' },
    );
  }

  /** Reads the key, decides, writes with the revision read; decides again after a conflict. True when it wrote. */
  #apply(key: string, decide: (lock: TurnLockRecord | null, now: number) => Step): Promise<boolean> {
    return this.#serial.run(key, async () => {
      for (let attempt = 1; attempt <= MAX_CAS_ATTEMPTS; attempt += 1) {
        const current = await this.#read(key);
        const step = decide(current.lock, this.#options.clock.now());
        if (step.kind === 'none') return false;
        if (!this.#options.mayWrite()) throw leaseLapsed();
        if (await this.#write(key, current, step)) return true;
      }
      throw new UnavailableError(`turn lock ${key} kept changing under ${MAX_CAS_ATTEMPTS} attempts; retry`);
    });
  }

  async #read(key: string): Promise<Current> {
    const entry = await storage(() => this.#options.kv.get(key));
    if (entry === null) return { revision: 0, lock: null };
    if (entry.operation !== 'PUT') return { revision: entry.revision, lock: null };
    let json: unknown;
    try {
      json = entry.json();
    } catch {
      json = undefined;
    }
    const parsed = TurnLockRecordSchema.safeParse(json);
    if (!parsed.success) {
      this.#options.onQuarantined();
      this.#options.logger.warn(
        { key, revision: entry.revision },
        'turn lock value not written by a hub; treated as free',
      );
      return { revision: entry.revision, lock: null };
    }
    return { revision: entry.revision, lock: parsed.data };
  }

  /** Writes `step` if the key is still at `current.revision`; false when it moved (decide again). */
  async #write(key: string, current: Current, step: Exclude<Step, { kind: 'none' }>): Promise<boolean> {
    const { kv } = this.#options;
    try {
      if (step.kind === 'put') {
        await kv.put(key, JSON.stringify(step.record), { previousSeq: current.revision });
      } else if (current.revision > 0) {
        await kv.delete(key, { previousSeq: current.revision });
      }
      return true;
    } catch (err) {
      if (isRevisionConflict(err)) return false;
      throw new UnavailableError('turn locks cannot be written now; retry', { cause: err });
    }
  }
}

/** Runs a KV read; a failure (timeout, no JetStream leader) is `UnavailableError`, which the client retries. */
async function storage<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    throw new UnavailableError('turn locks cannot be read now; retry', { cause: err });
  }
}

/** The server refused a write because the key's revision is not the expected one. */
function isRevisionConflict(err: unknown): boolean {
  return (
    err instanceof JetStreamApiError &&
    (err.code === JetStreamApiCodes.StreamWrongLastSequence ||
      err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}
