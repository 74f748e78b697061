import { ChannelMetadataSchema, NotFoundError, isTerminalChannelState, type ChannelMetadata } from '@ag2net/protocol';
import { setImmediate } from 'node:timers/promises';
import { detachedRuntime, type ChannelRuntime } from './channel-runtime.js';
import type { FencedKv } from '../nats/fenced-kv.js';
import type { KvValue } from '../base/kv-scan.js';
import { parseJson } from '../base/parse-json.js';
import type { Quarantine } from '../base/quarantined-record.js';
import { RetentionQueue } from './retention-queue.js';

/** When a channel ended (ms), for retention: `closed_at`, or `created_at` for a record without it. */
export function endedAtMs(metadata: Pick<ChannelMetadata, 'closed_at' | 'created_at'>): number {
  return Date.parse(metadata.closed_at ?? metadata.created_at);
}

/**
 * The answer to a channel that does not exist, and to a read of one the caller may not see: the same error, so that
 * no read tells the two apart. It echoes only the id the caller sent.
 */
export function channelNotFound(channelId: string): NotFoundError {
  return new NotFoundError(`channel not found: ${channelId}`);
}

/** The channels of one hub: runtimes in memory, metadata in the KV bucket `<PREFIX>_channels` (key = channel id). */
export class ChannelTable {
  readonly #channels = new Map<string, ChannelRuntime>();
  /** Ids of channels not known to have ended; pruned lazily, since an ended channel never reopens. */
  readonly #open = new Set<string>();
  /**
   * Channel id → `expired_at` of the channels whose history expired (their tombstones). A channel's record in KV is its
   * metadata plus, once its history expired, `expired_at`; the metadata kept in memory leaves it out (it is this map's).
   */
  readonly #expired = new Map<string, string>();
  /** Ended channels whose history is kept, for retention. */
  readonly retention = new RetentionQueue();

  constructor(private readonly kv: FencedKv) {}

  get(channelId: string): ChannelRuntime | undefined {
    return this.#channels.get(channelId);
  }

  /** The runtime of a known channel; `NotFoundError` "channel not found: <id>" otherwise. */
  require(channelId: string): ChannelRuntime {
    const rt = this.#channels.get(channelId);
    if (rt === undefined) throw channelNotFound(channelId);
    return rt;
  }

  set(rt: ChannelRuntime): void {
    this.#channels.set(rt.metadata.channel_id, rt);
    if (!isTerminalChannelState(rt.metadata.state)) this.#open.add(rt.metadata.channel_id);
    else this.#noteEnded(rt.metadata);
  }

  clear(): void {
    this.#channels.clear();
    this.#open.clear();
    this.#expired.clear();
    this.retention.clear();
  }

  /** Writes the channel's metadata to KV (with its tombstone, once its history expired). */
  async persist(metadata: ChannelMetadata): Promise<void> {
    const expiredAt = this.#expired.get(metadata.channel_id);
    await this.kv.put(
      metadata.channel_id,
      JSON.stringify(expiredAt === undefined ? metadata : { ...metadata, expired_at: expiredAt }),
    );
    if (isTerminalChannelState(metadata.state)) this.#noteEnded(metadata);
  }

  /** How many channels' histories expired (tombstones noted). */
  get expiredCount(): number {
    return this.#expired.size;
  }

  /** When the channel's history expired (its tombstone), or `null` while it is kept. */
  expiredAt(channelId: string): string | null {
    return this.#expired.get(channelId) ?? null;
  }

  /**
   * Writes the tombstone of an ended channel whose history was removed: its record gets `expired_at`, its state
   * stays, and memory keeps its metadata only. Idempotent.
   */
  async expire(rt: ChannelRuntime, expiredAt: string): Promise<void> {
    const { metadata } = rt;
    const channelId = metadata.channel_id;
    await this.kv.put(channelId, JSON.stringify({ ...metadata, expired_at: expiredAt }));
    this.#expired.set(channelId, expiredAt);
    this.retention.delete(channelId);
    if (this.#channels.get(channelId) === rt && !rt.detached) this.set(detachedRuntime(metadata, rt.adapter));
  }

  #noteEnded(metadata: ChannelMetadata): void {
    if (!this.#expired.has(metadata.channel_id)) this.retention.add(metadata.channel_id, endedAtMs(metadata));
  }

  /**
   * The metadata records of `records` (for hydrate: a pass over the bucket, `lastValues`, or its partition's part of
   * one); the tombstones of expired histories are noted (`expiredAt`). A record that does not parse, or that names
   * another channel than its key, is quarantined and skipped.
   */
  async loadMetadata(
    records: AsyncIterable<KvValue> | Iterable<KvValue>,
    quarantine: Quarantine,
  ): Promise<ChannelMetadata[]> {
    const out: ChannelMetadata[] = [];
    let count = 0;
    for await (const { key, revision, value } of records) {
      // Buffered records parse without returning to the event loop: give timers (lease renewal) a turn now and then.
      if (++count % 500 === 0) await setImmediate();
      const parsed = parseJson(value, ChannelMetadataSchema);
      const reason = !parsed.ok
        ? parsed.reason
        : parsed.value.channel_id !== key
          ? `metadata of channel ${parsed.value.channel_id} under the key ${key}`
          : null;
      if (reason === null && parsed.ok) {
        const { expired_at: expiredAt, ...metadata } = parsed.value;
        if (expiredAt !== undefined) this.#expired.set(key, expiredAt);
        out.push(metadata);
      } else quarantine({ source: 'channels', key, seq: revision, reason: reason ?? 'invalid' });
    }
    return out;
  }

  /** Every channel in id order (ids are ULIDs, so creation order). */
  all(): ChannelRuntime[] {
    return [...this.#channels.values()].sort((a, b) =>
      a.metadata.channel_id < b.metadata.channel_id ? -1 : a.metadata.channel_id > b.metadata.channel_id ? 1 : 0,
    );
  }

  /** Channels that are pending, active or closing, in id order. Costs O(open channels), not O(all channels). */
  open(): ChannelRuntime[] {
    const out: ChannelRuntime[] = [];
    for (const id of this.#open) {
      const rt = this.#channels.get(id);
      if (rt === undefined || isTerminalChannelState(rt.metadata.state)) this.#open.delete(id);
      else out.push(rt);
    }
    return out.sort((a, b) =>
      a.metadata.channel_id < b.metadata.channel_id ? -1 : a.metadata.channel_id > b.metadata.channel_id ? 1 : 0,
    );
  }

  /** How many open channels `creatorId` created; no copy, no sort (it runs on every channel creation). */
  openCountBy(creatorId: string): number {
    let count = 0;
    for (const id of this.#open) {
      const rt = this.#channels.get(id);
      if (rt !== undefined && !isTerminalChannelState(rt.metadata.state) && rt.metadata.creator_id === creatorId) {
        count += 1;
      }
    }
    return count;
  }
}
