import type { HubNames } from '@ag2net/protocol';
import type { JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';

/** How long a turn lock outlives a replica that died holding it, in ms. */
export const TURN_LOCK_TTL_MS = 120_000;

/**
 * Mutual exclusion of turns for one (agent, channel) across every replica that hosts the agent: a KV key per pair,
 * taken with `create` (only one replica wins), kept alive with `update` on the revision this replica wrote (so a
 * replica whose lock lapsed cannot overwrite the next holder's), and released with a subject purge once the key is
 * checked to still be this replica's. The bucket TTL frees the lock of a replica that died mid-turn.
 */
export class TurnLocks {
  readonly #revisions = new Map<string, number>();

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

  /** Takes the lock of (agent, channel); false when another replica holds it. */
  async acquire(agentId: string, channelId: string): Promise<boolean> {
    const key = `${agentId}.${channelId}`;
    try {
      this.#revisions.set(key, await this.kv.create(key, this.holder));
      return true;
    } catch {
      return false;
    }
  }

  /** Keeps a held lock alive while a long turn runs; false when it was lost (lapsed and taken). */
  async renew(agentId: string, channelId: string): Promise<boolean> {
    const key = `${agentId}.${channelId}`;
    const revision = this.#revisions.get(key);
    if (revision === undefined) return false;
    try {
      this.#revisions.set(key, await this.kv.update(key, this.holder, revision));
      return true;
    } catch {
      this.#revisions.delete(key);
      return false;
    }
  }

  /** Gives the lock up, unless it already lapsed and another replica holds it now. */
  async release(agentId: string, channelId: string): Promise<void> {
    const key = `${agentId}.${channelId}`;
    const revision = this.#revisions.get(key);
    this.#revisions.delete(key);
    if (revision === undefined) return;
    const entry = await this.kv.get(key);
    if (entry === null || entry.revision !== revision) return;
    await this.jsm.streams.purge(`KV_${this.bucket}`, { filter: `$KV.${this.bucket}.${key}` });
  }
}
