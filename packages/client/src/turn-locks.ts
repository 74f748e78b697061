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
export class TurnLocks {
  private constructor(
    private readonly kv: KV,
    private readonly jsm: JetStreamManager,
    private readonly bucket: string,
    private readonly holder: string,
    /** The bucket's TTL in ms: a lock not renewed within it lapses. */
    readonly ttlMs: number,
  ) {}

  /**
   * Opens (creating on first use) the lock bucket of the hub with `names`, with the replica count of the hub's
   * inbox stream. `ttlMs` only applies when this call creates the bucket; every replica then shares its TTL.
   */
  static async open(
    nc: NatsConnection,
    jsm: JetStreamManager,
    names: HubNames,
    holder: string,
    ttlMs = TURN_LOCK_TTL_MS,
  ): Promise<TurnLocks> {
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
    return new TurnLocks(kv, jsm, bucket, holder, ttl > 0 ? ttl : ttlMs);
  }

  /** Takes the lock of (agent, channel); `null` when another replica holds it. Throws when NATS did not answer. */
  async acquire(agentId: string, channelId: string): Promise<HeldTurnLock | null> {
    const key = `${agentId}.${channelId}`;
    try {
      return { key, revision: await this.kv.create(key, this.holder) };
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
      lock.revision = await this.kv.update(lock.key, this.holder, lock.revision);
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
    await this.jsm.streams.purge(`KV_${this.bucket}`, { filter: `$KV.${this.bucket}.${lock.key}` });
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
