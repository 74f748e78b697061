import type { HubNames } from '@ag2net/protocol';
import type { JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';

/** How long a turn lock outlives a replica that died holding it, in ms. */
export const TURN_LOCK_TTL_MS = 120_000;

/**
 * Mutual exclusion of turns for one (agent, channel) across every replica that hosts the agent: a KV key per pair,
 * taken with `create` (only one replica wins) and released with a subject purge. The bucket TTL frees the lock of a
 * replica that died mid-turn.
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

  /** Keeps a held lock alive while a long turn runs. */
  async renew(agentId: string, channelId: string): Promise<void> {
    await this.kv.put(`${agentId}.${channelId}`, this.holder);
  }

  /**
   * Opens (creating on first use) the lock bucket of the hub with `names`. `ttlMs` only applies when this call
   * creates the bucket; every replica then shares the bucket's TTL.
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
      kv = await kvm.create(bucket, { history: 1, ttl: ttlMs });
      ttl = ttlMs;
    }
    return new TurnLocks(kv, jsm, bucket, holder, ttl > 0 ? ttl : ttlMs);
  }

  /** Takes the lock of (agent, channel); false when another replica holds it. */
  async acquire(agentId: string, channelId: string): Promise<boolean> {
    try {
      await this.kv.create(`${agentId}.${channelId}`, this.holder);
      return true;
    } catch {
      return false;
    }
  }

  async release(agentId: string, channelId: string): Promise<void> {
    await this.jsm.streams.purge(`KV_${this.bucket}`, { filter: `$KV.${this.bucket}.${agentId}.${channelId}` });
  }
}
