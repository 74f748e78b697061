import type { HubNames } from '@ag2net/protocol';
import { JetStreamApiError, type JetStreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';

const KEY = 'active';

/**
 * The single-writer lease: a key in the `<PREFIX>_leases` bucket whose TTL is the lease time. `kv.create` acquires
 * it (safe under races, also on R3), `kv.update` with the last revision renews it (only the holder can), and a
 * stream purge releases it (a KV delete would leave a marker that turns the next create into an update). The
 * revision at acquisition is the fencing epoch stamped into every WAL message.
 */
export class Lease {
  #revision = 0;

  constructor(
    private readonly kv: KV,
    private readonly jsm: JetStreamManager,
    private readonly names: HubNames,
    private readonly holderId: string,
  ) {}

  /** Tries to take the lease; returns the epoch, or `null` when another hub holds it. */
  async tryAcquire(): Promise<number | null> {
    try {
      this.#revision = await this.kv.create(KEY, this.holderId);
      return this.#revision;
    } catch (err) {
      if (err instanceof JetStreamApiError && err.code === 10071) return null;
      if (err instanceof Error && /wrong last sequence|key exists/i.test(err.message)) return null;
      throw err;
    }
  }

  /** Extends the lease; `false` means it was lost (expired and taken, or purged). */
  async renew(): Promise<boolean> {
    try {
      this.#revision = await this.kv.update(KEY, this.holderId, this.#revision);
      return true;
    } catch {
      return false;
    }
  }

  /** Gives the lease up so that a standby takes over at once. */
  async release(): Promise<void> {
    const entry = await this.kv.get(KEY);
    if (entry === null || entry.string() !== this.holderId) return;
    await this.jsm.streams.purge(`KV_${this.names.leasesBucket}`, { filter: `$KV.${this.names.leasesBucket}.${KEY}` });
  }

  /** The current holder's id, or `null`. */
  async holder(): Promise<string | null> {
    const entry = await this.kv.get(KEY);
    return entry === null || entry.operation !== 'PUT' ? null : entry.string();
  }
}
