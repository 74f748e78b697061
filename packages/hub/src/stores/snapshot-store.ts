import { isTerminalChannelState } from '@ag2net/protocol';
import type { KeyedSerial } from '@ag2net/protocol/internal';
import type { KV } from '@nats-io/kv';
import type { ChannelRuntime } from './channel-runtime.js';
import type { ChannelTable } from './channel-table.js';
import { lastValues, type KvScan, type KvValue } from '../base/kv-scan.js';
import { parseJson } from '../base/parse-json.js';
import { leaseLapsed } from '../nats/fenced-kv.js';
import type { Logger } from '../base/logger.js';
import { channelFields } from '../base/log-names.js';
import { ChannelSnapshotRecordSchema, inconsistency, recordOf, type ChannelSnapshotRecord } from './snapshot-record.js';

/**
 * A channel's snapshot is written once its log has grown by this many envelopes since the last one. Hydrate then
 * folds at most this many envelopes of a busy channel after its snapshot; a record costs about 60 bytes per id in
 * the channel's recent-id window (at most 1,024), so this keeps the writes to a fraction of what is appended.
 */
export const SNAPSHOT_EVERY = 128;

/** A channel whose snapshot lags its log and that took no envelope for this long gets its snapshot written, ms. */
export const SNAPSHOT_IDLE_MS = 2_000;

/** A stored snapshot as hydrate finds it: a self-consistent record, or why it cannot be used. */
export type LoadedSnapshot =
  | { readonly ok: true; readonly key: string; readonly record: ChannelSnapshotRecord; readonly revision: number }
  | { readonly ok: false; readonly key: string; readonly reason: string; readonly revision: number };

/** What the store needs of the hub. */
export interface SnapshotStoreDeps {
  /** The channels' serial slots: a snapshot is written in its channel's slot, after what the slot's holder did. */
  readonly serial: KeyedSerial;
  readonly channels: ChannelTable;
  /** Whether this hub may write now (it holds the lease): a deposed hub writes no snapshot. */
  readonly mayWrite: () => boolean;
  readonly logger: Logger;
}

/**
 * Per-channel snapshots in the KV bucket `<PREFIX>_snapshots`: what folding the channel's log through a point built,
 * so that hydrate folds only what follows (see `snapshot-record.ts` and hydrate). An open channel's is under `open.<id>`; when
 * the channel ends its final snapshot goes under `ended.<id>` and the open one is deleted, so that hydrate reads the
 * open channels' snapshots in one pass however many channels ended.
 *
 * When one is written: every `SNAPSHOT_EVERY` envelopes of a channel, when a channel took no envelope for
 * `SNAPSHOT_IDLE_MS` (`flushIdle`), when it ends (its final snapshot, from which an ended channel is served), and for
 * every open channel when the hub steps down gracefully. Each write runs in the channel's serial slot, so it covers
 * an envelope only after the hub acted on it (a close it started is in KV first); writes of one channel never
 * overtake each other. A snapshot always describes a prefix of the log, whoever wrote it, so a stale one only means
 * a longer tail; hydrate checks each against the log before it trusts it.
 */
export class SnapshotStore {
  /** Channel → the sequence its stored snapshot covers (written or restored by this hub). */
  readonly #covered = new Map<string, number>();
  /** Channel → when it last took an envelope (monotonic ms), while its snapshot lags. */
  readonly #lagging = new Map<string, number>();

  constructor(
    private readonly kv: KV,
    private readonly deps: SnapshotStoreDeps,
  ) {}

  /** Called after every envelope a channel records live: schedules a snapshot when the log grew enough. */
  afterAppend(rt: ChannelRuntime): void {
    const channelId = rt.metadata.channel_id;
    this.#lagging.set(channelId, performance.now());
    if (rt.streamSeqs.length - (this.#covered.get(channelId) ?? 0) >= SNAPSHOT_EVERY) this.schedule(channelId);
  }

  /** Writes the channel's snapshot in its serial slot, after what is queued there; failures are logged. */
  schedule(channelId: string): void {
    void this.deps.serial.run(channelId, async () => {
      const rt = this.deps.channels.get(channelId);
      if (rt !== undefined && !rt.detached) await this.write(rt);
    });
  }

  /** Schedules the snapshot of every channel that lags its log and took no envelope for `idleMs`. */
  flushIdle(idleMs: number = SNAPSHOT_IDLE_MS): void {
    const now = performance.now();
    for (const [channelId, at] of this.#lagging) {
      if (now - at < idleMs) continue;
      this.#lagging.delete(channelId);
      this.schedule(channelId);
    }
  }

  /**
   * Writes the runtime's snapshot now, unless the stored one covers as much. The caller holds the channel's slot.
   * Never throws: false when nothing could be written (no lease, or NATS refused; logged).
   */
  async write(rt: ChannelRuntime): Promise<boolean> {
    const record = recordOf(rt);
    if (record === null) return true;
    const channelId = record.channel_id;
    if ((this.#covered.get(channelId) ?? 0) >= record.sequence) return true;
    if (!this.deps.mayWrite()) return false;
    try {
      if (isTerminalChannelState(rt.metadata.state)) {
        await this.kv.put(endedKey(channelId), JSON.stringify(record));
        await this.kv.delete(openKey(channelId));
      } else {
        await this.kv.put(openKey(channelId), JSON.stringify(record));
      }
      this.#covered.set(channelId, record.sequence);
      return true;
    } catch (err) {
      this.deps.logger.warn({ err, ...channelFields(rt.metadata), sequence: record.sequence }, 'snapshot write failed');
      return false;
    }
  }

  /** Hydrate restored the channel from a snapshot covering `sequence`; `folded` envelopes followed it. */
  restored(channelId: string, sequence: number, folded: number): void {
    if (sequence > 0) this.#covered.set(channelId, sequence);
    if (folded > 0) this.#lagging.set(channelId, performance.now());
  }

  /** The channel ended and is detached: nothing more is written for it. */
  forget(channelId: string): void {
    this.#covered.delete(channelId);
    this.#lagging.delete(channelId);
  }

  /**
   * Removes the channel's stored snapshots (its history expired): a purge of each key, which drops every revision and
   * leaves a marker without a value. Idempotent; throws what NATS throws, and `unavailable` (before each purge) when
   * this hub may not write.
   */
  async remove(channelId: string): Promise<void> {
    for (const key of [endedKey(channelId), openKey(channelId)]) {
      const entry = await this.kv.get(key);
      if (entry === null || entry.operation === 'PURGE') continue;
      if (!this.deps.mayWrite()) throw leaseLapsed();
      await this.kv.purge(key);
    }
    this.forget(channelId);
  }

  /** A new term starts from what NATS holds. */
  clear(): void {
    this.#covered.clear();
    this.#lagging.clear();
  }

  /**
   * The stored snapshots of every open channel, by channel id, in one pass over the bucket's `open.` keys (what
   * hydrate needs, whatever the number of ended channels).
   */
  async loadOpen(where: Omit<KvScan, 'keys'>): Promise<Map<string, LoadedSnapshot>> {
    const out = new Map<string, LoadedSnapshot>();
    for await (const entry of lastValues({ ...where, keys: `${OPEN}>` })) {
      const channelId = entry.key.slice(OPEN.length);
      out.set(channelId, parsed(channelId, entry));
    }
    return out;
  }

  /** The stored snapshot of one channel: its final one if it ended, else its last open one; `null` when none. */
  async load(channelId: string): Promise<LoadedSnapshot | null> {
    for (const key of [endedKey(channelId), openKey(channelId)]) {
      const entry = await this.kv.get(key);
      if (entry !== null && entry.operation === 'PUT') {
        return parsed(channelId, { key, value: entry.string(), revision: entry.revision });
      }
    }
    return null;
  }
}

/** Keys of open channels' snapshots start with this; an ended channel's final snapshot is under `ended.<id>`. */
const OPEN = 'open.';

function openKey(channelId: string): string {
  return `${OPEN}${channelId}`;
}

function endedKey(channelId: string): string {
  return `ended.${channelId}`;
}

/** A stored record checked for its schema and its own consistency; `key` says where it was found. */
function parsed(channelId: string, entry: KvValue): LoadedSnapshot {
  const { key, value, revision } = entry;
  const result = parseJson(value, ChannelSnapshotRecordSchema);
  if (!result.ok) return { ok: false, key, reason: result.reason, revision };
  const reason = inconsistency(result.value, channelId);
  if (reason !== null) return { ok: false, key, reason, revision };
  return { ok: true, key, record: result.value, revision };
}
