import type { HubNames } from '@ag2net/protocol';
import { JetStreamApiCodes, JetStreamApiError, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';

/**
 * Default lifetime of a turn lock that is not renewed, in ms: a replica that dies mid-turn frees its channel about
 * this long after its last renewal. Holders renew every third of it.
 */
export const TURN_LOCK_TTL_MS = 6_000;

/** A lock this replica holds: the key and the revision it last wrote. */
export interface HeldTurnLock {
  readonly key: string;
  revision: number;
}

/**
 * Mutual exclusion of turns for one (agent, channel) across every replica that hosts the agent: a KV key per pair,
 * taken with `create` (only one replica wins), kept alive with `update` on the revision this replica wrote (so a
 * replica whose lock lapsed cannot overwrite the next holder's), and released with a subject purge once the key is
 * checked to still be this replica's. The bucket's TTL (stream `max_age`, server time) frees the lock of a replica
 * that stopped renewing it.
 */
/** Where `TurnLocks.open` finds or creates the lock bucket, and who holds the locks it takes. */
export interface TurnLocksOptions {
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
  /** The hub's names: the bucket is named after its prefix and copies its inbox stream's replica count. */
  readonly names: HubNames;
  /** This replica's id, written into every lock it takes. */
  readonly holder: string;
  /** The bucket's TTL in ms when this call creates it; default `TURN_LOCK_TTL_MS`. */
  readonly ttlMs?: number;
}

export class TurnLocks {
  /** The bucket's TTL in ms: a lock not renewed within it lapses. */
  readonly ttlMs: number;

  private constructor(
    private readonly kv: KV,
    private readonly jsm: JetStreamManager,
    private readonly lock: { readonly bucket: string; readonly holder: string; readonly ttlMs: number },
  ) {
    this.ttlMs = lock.ttlMs;
  }

  /**
   * Opens (creating on first use) the lock bucket of the hub with `names`, with the replica count of the hub's
   * inbox stream. `ttlMs` only applies when this call creates the bucket; every replica then shares its TTL.
   */
  static async open(options: TurnLocksOptions): Promise<TurnLocks> {
    const { nc, jsm, names, holder } = options;
    const ttlMs = options.ttlMs ?? TURN_LOCK_TTL_MS;
    const bucket = `${names.prefix.toUpperCase()}_turnlocks`;
    const kvm = new Kvm(nc);
    let kv = await kvm.open(bucket);
    let ttl: number;
    try {
      ttl = (await kv.status()).ttl;
    } catch {
      const replicas = (await jsm.streams.info(names.inboxStream)).config.num_replicas;
      kv = await kvm.create(bucket, { history: 1, ttl: ttlMs, replicas });
      ttl = ttlMs;
    }
    return new TurnLocks(kv, jsm, { bucket, holder, ttlMs: ttl > 0 ? ttl : ttlMs });
  }

  /** Takes the lock of (agent, channel); `null` when another replica holds it. Throws when NATS did not answer. */
  async acquire(agentId: string, channelId: string): Promise<HeldTurnLock | null> {
    const key = `${agentId}.${channelId}`;
    try {
      return { key, revision: await this.kv.create(key, this.lock.holder) };
    } catch (err) {
      if (isRevisionConflict(err)) return null;
      throw err;
    }
  }

  /**
   * Keeps a held lock alive: true when renewed, false when it is lost (it lapsed, was purged or another replica took
   * it: the revision moved). Throws when the outcome is unknown (no answer), so the caller can try again.
   */
  async renew(lock: HeldTurnLock): Promise<boolean> {
    try {
      lock.revision = await this.kv.update(lock.key, this.lock.holder, lock.revision);
      return true;
    } catch (err) {
      if (isRevisionConflict(err)) return false;
      throw err;
    }
  }

  /** Gives the lock up, unless it already lapsed and another replica holds it now. */
  async release(lock: HeldTurnLock): Promise<void> {
    const entry = await this.kv.get(lock.key);
    if (entry === null || entry.revision !== lock.revision) return;
    await this.jsm.streams.purge(`KV_${this.lock.bucket}`, { filter: `$KV.${this.lock.bucket}.${lock.key}` });
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
