import { isTerminalChannelState } from '@ag2net/protocol';
import { KeyedSerial } from '@ag2net/protocol/internal';
import type { KV } from '@nats-io/kv';
import type { ChannelRuntime } from './channel-runtime.js';
import type { ChannelTable } from './channel-table.js';
import { lastValues, type KvScan, type KvValue } from '../base/kv-scan.js';
import { parseJson } from '../base/parse-json.js';
import { leaseLapsed } from '../nats/fenced-kv.js';
import type { Logger } from '../base/logger.js';
import { channelFields } from '../base/log-names.js';
import { mapLimit } from '../base/map-limit.js';
import {
  ChannelSnapshotRecordSchema,
  completeRecord,
  recordOf,
  seqChunkText,
  SEQ_CHUNK,
  type ChannelSnapshotRecord,
  type FullSnapshot,
} from './snapshot-record.js';

/**
 * A channel's snapshot is written once its log has grown by this many envelopes since the last one. Hydrate then
 * folds at most this many envelopes of a busy channel after its snapshot; a record costs about 60 bytes per id in
 * the channel's recent-id window (at most 1,024), so this keeps the writes to a fraction of what is appended.
 */
export const SNAPSHOT_EVERY = 128;

/**
 * Records whose chunks are read at once when many are loaded, and chunk reads at once per record: at most 256 KV
 * reads in flight, however many long channels a hydrate finds.
 */
const CHUNKED_AT_ONCE = 8;
const CHUNK_READS_AT_ONCE = 32;

/** A channel whose snapshot lags its log and that took no envelope for this long gets its snapshot written, ms. */
export const SNAPSHOT_IDLE_MS = 2_000;

/** A stored snapshot as hydrate finds it: a self-consistent record with its chunks, or why it cannot be used. */
export type LoadedSnapshot =
  | { readonly ok: true; readonly key: string; readonly snapshot: FullSnapshot; readonly revision: number }
  | { readonly ok: false; readonly key: string; readonly reason: string; readonly revision: number };

/** What the store needs of the hub. */
export interface SnapshotStoreDeps {
  /** The channels' serial slots: a snapshot is taken in its channel's slot, after what the slot's holder did. */
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
 * open channels' snapshots in one pass however many channels ended. A long channel's first stream sequences are in
 * chunks under `seqs.<id>.<index>` (`SEQ_CHUNK`), each written once, before the first record that counts it.
 *
 * When one is written: every `SNAPSHOT_EVERY` envelopes of a channel, when a channel took no envelope for
 * `SNAPSHOT_IDLE_MS` (`flushIdle`), when it ends (its final snapshot, from which an ended channel is served), and for
 * every open channel when the hub steps down gracefully. A scheduled snapshot is taken in the channel's serial slot,
 * so it covers an envelope only after the hub acted on it (a close it started is in KV first), and written to KV
 * after the slot is released: the channel's next posts never wait for the bucket (a slow or electing KV stream holds
 * no admission). The writes of one channel run one after another in the order they were taken (`#writes`), so none
 * overtakes another. A snapshot always describes a prefix of the log, whoever wrote it, so a stale one only means a
 * longer tail; hydrate checks each against the log before it trusts it.
 */
export class SnapshotStore {
  /** Channel → the sequence its stored snapshot covers (written or restored by this hub). */
  readonly #covered = new Map<string, number>();
  /**
   * Channel → the sequence of its newest snapshot taken, stored or not yet: the next one is counted from here, so
   * that the posts appended while a snapshot waits for its slot or its write do not each take another.
   */
  readonly #taken = new Map<string, number>();
  /** Channels whose snapshot is scheduled in their slot and not taken yet: scheduling again adds nothing. */
  readonly #scheduled = new Set<string>();
  /** Channel → when it last took an envelope (monotonic ms), while its snapshot lags. */
  readonly #lagging = new Map<string, number>();
  /** Per channel, the KV writes of its snapshots, in the order they were taken. */
  readonly #writes = new KeyedSerial();
  /** Channel → how many chunks of its stream sequences are stored (written or found by this hub). */
  readonly #chunks = new Map<string, number>();

  constructor(
    private readonly kv: KV,
    private readonly deps: SnapshotStoreDeps,
  ) {}

  /** Called after every envelope a channel records live: schedules a snapshot when the log grew enough. */
  afterAppend(rt: ChannelRuntime): void {
    const channelId = rt.metadata.channel_id;
    this.#lagging.set(channelId, performance.now());
    const from = Math.max(this.#covered.get(channelId) ?? 0, this.#taken.get(channelId) ?? 0);
    if (rt.streamSeqs.length - from >= SNAPSHOT_EVERY) this.schedule(channelId);
  }

  /**
   * Takes the channel's snapshot in its serial slot, after what is queued there, and writes it once the slot is free;
   * failures are logged. Once per slot turn: while one is scheduled, scheduling again adds nothing (it will cover
   * whatever was appended meanwhile).
   */
  schedule(channelId: string): void {
    if (this.#scheduled.has(channelId)) return;
    this.#scheduled.add(channelId);
    void this.deps.serial.run(channelId, () => {
      this.#scheduled.delete(channelId);
      const rt = this.deps.channels.get(channelId);
      if (rt !== undefined && !rt.detached) void this.write(rt);
      return Promise.resolve();
    });
  }

  /** Resolves once every snapshot taken so far is written (or failed). */
  idle(): Promise<void> {
    return this.#writes.idle();
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
   * Takes the runtime's snapshot now (the caller holds the channel's slot, or the channel takes no appends) and
   * writes it after the channel's earlier ones, unless the stored one covers as much by then. Resolves once written.
   * Never throws: false when nothing could be written (no lease, or NATS refused; logged).
   */
  write(rt: ChannelRuntime): Promise<boolean> {
    const record = recordOf(rt);
    if (record === null) return Promise.resolve(true);
    const channelId = record.channel_id;
    if ((this.#covered.get(channelId) ?? 0) >= record.sequence) return Promise.resolve(true);
    // Serialized now: the runtime goes on changing once the slot is released. Its chunks need not be: the stream
    // sequences they hold never change, so they are encoded when written, and only those not stored yet.
    this.#taken.set(channelId, Math.max(this.#taken.get(channelId) ?? 0, record.sequence));
    const taken: TakenSnapshot = {
      channelId,
      sequence: record.sequence,
      ended: isTerminalChannelState(rt.metadata.state),
      streamSeqs: rt.streamSeqs,
      seqChunks: record.seq_chunks,
      text: JSON.stringify(record),
      fields: channelFields(rt.metadata),
    };
    return this.#writes.run(channelId, () => this.#put(taken));
  }

  async #put(taken: TakenSnapshot): Promise<boolean> {
    const { channelId, sequence } = taken;
    if ((this.#covered.get(channelId) ?? 0) >= sequence) return true;
    if (!this.deps.mayWrite()) return this.#notWritten(channelId);
    try {
      // Every chunk the record counts is stored before it, whichever earlier snapshot failed to store one.
      for (let index = this.#chunks.get(channelId) ?? 0; index < taken.seqChunks; index += 1) {
        if (!this.deps.mayWrite()) return this.#notWritten(channelId);
        await this.kv.put(chunkKey(channelId, index), seqChunkText(taken.streamSeqs, index));
        this.#chunks.set(channelId, index + 1);
      }
      if (taken.ended) {
        await this.kv.put(endedKey(channelId), taken.text);
        await this.kv.delete(openKey(channelId));
      } else {
        await this.kv.put(openKey(channelId), taken.text);
      }
      this.#covered.set(channelId, sequence);
      return true;
    } catch (err) {
      this.deps.logger.warn({ err, ...taken.fields, sequence }, 'snapshot write failed');
      return this.#notWritten(channelId);
    }
  }

  /** A snapshot was not written: the next append takes another. Returns false. */
  #notWritten(channelId: string): false {
    this.#taken.set(channelId, this.#covered.get(channelId) ?? 0);
    return false;
  }

  /**
   * Hydrate restored the channel from a snapshot covering `sequence` (whose chunks of stream sequences it found
   * stored); `folded` envelopes followed it.
   */
  restored(channelId: string, sequence: number, folded: number): void {
    if (sequence > 0) this.#covered.set(channelId, sequence);
    const chunks = Math.floor(sequence / SEQ_CHUNK);
    if (chunks > 0) this.#chunks.set(channelId, chunks);
    if (folded > 0) this.#lagging.set(channelId, performance.now());
  }

  /** The channel ended and is detached: nothing more is written for it. */
  forget(channelId: string): void {
    this.#covered.delete(channelId);
    this.#taken.delete(channelId);
    this.#lagging.delete(channelId);
    this.#chunks.delete(channelId);
  }

  /**
   * Removes the channel's stored snapshots (its history expired): a purge of each key, which drops every revision and
   * leaves a marker without a value. Idempotent; throws what NATS throws, and `unavailable` (before each purge) when
   * this hub may not write.
   */
  async remove(channelId: string): Promise<void> {
    // After the channel's snapshot writes still under way: none of them may bring a snapshot back.
    await this.#writes.run(channelId, async () => {
      for (const key of [endedKey(channelId), openKey(channelId)]) {
        const entry = await this.kv.get(key);
        if (entry === null || entry.operation === 'PURGE') continue;
        if (!this.deps.mayWrite()) throw leaseLapsed();
        await this.kv.purge(key);
      }
      // After the records: a record whose chunks are gone is only ignored (the channel folds from its log).
      const chunkKeys: string[] = [];
      for await (const key of await this.kv.keys(`${SEQS}${channelId}.*`)) chunkKeys.push(key);
      for (const key of chunkKeys) {
        if (!this.deps.mayWrite()) throw leaseLapsed();
        await this.kv.purge(key);
      }
    });
    this.forget(channelId);
  }

  /** A new term starts from what NATS holds. */
  clear(): void {
    this.#covered.clear();
    this.#taken.clear();
    this.#lagging.clear();
    this.#chunks.clear();
  }

  /**
   * The stored snapshots of open channels, by channel id, from `entries`: a pass over the bucket's `open.` keys
   * (`scanOpenSnapshots`, what hydrate needs, whatever the number of ended channels), or a part of one.
   */
  async loadOpen(entries: AsyncIterable<KvValue> | Iterable<KvValue>): Promise<Map<string, LoadedSnapshot>> {
    const stored: { readonly channelId: string; readonly entry: KvValue }[] = [];
    for await (const entry of entries) stored.push({ channelId: channelOfOpenSnapshot(entry.key), entry });
    // Most records have no chunks and complete at once; long channels' chunks are read a few channels at a time.
    const loaded = await mapLimit(stored, CHUNKED_AT_ONCE, async ({ channelId, entry }) => {
      const snapshot = await this.#complete(channelId, entry);
      return [channelId, snapshot] as const;
    });
    return new Map(loaded);
  }

  /** The stored snapshot of one channel: its final one if it ended, else its last open one; `null` when none. */
  async load(channelId: string): Promise<LoadedSnapshot | null> {
    for (const key of [endedKey(channelId), openKey(channelId)]) {
      const entry = await this.kv.get(key);
      if (entry !== null && entry.operation === 'PUT') {
        return this.#complete(channelId, { key, value: entry.string(), revision: entry.revision });
      }
    }
    return null;
  }

  /** A stored record with its chunks of stream sequences, checked to add up (`completeRecord`). */
  async #complete(channelId: string, entry: KvValue): Promise<LoadedSnapshot> {
    const { key, revision } = entry;
    const first = parsed(entry);
    if (!first.ok) return { ok: false, key, reason: first.reason, revision };
    // Read a batch at a time, up to the first one missing: a damaged record counting a billion chunks costs a batch.
    const chunks: (string | null)[] = [];
    for (let missing = false; !missing && chunks.length < first.record.seq_chunks;) {
      const batch = Array.from(
        { length: Math.min(CHUNK_READS_AT_ONCE, first.record.seq_chunks - chunks.length) },
        (_, i) => chunks.length + i,
      );
      const read = await Promise.all(
        batch.map(async (index) => {
          const stored = await this.kv.get(chunkKey(channelId, index));
          return stored === null || stored.operation !== 'PUT' ? null : stored.string();
        }),
      );
      missing = read.includes(null);
      chunks.push(...read);
    }
    const complete = completeRecord(first.record, channelId, chunks);
    return complete.ok
      ? { ok: true, key, snapshot: complete.snapshot, revision }
      : { ok: false, key, reason: complete.reason, revision };
  }
}

/** A snapshot taken in its channel's slot, waiting for its KV write. */
interface TakenSnapshot {
  readonly channelId: string;
  readonly sequence: number;
  /** The channel had ended: the record goes under `ended.<id>` and the open one is deleted. */
  readonly ended: boolean;
  /** The channel's stream sequences (a prefix of them never changes): the chunks are encoded from them. */
  readonly streamSeqs: readonly number[];
  /** How many chunks the record counts: every one is stored before the record. */
  readonly seqChunks: number;
  readonly text: string;
  /** The channel's log fields, for a failure's log line. */
  readonly fields: ReturnType<typeof channelFields>;
}

/** Keys of open channels' snapshots start with this; an ended channel's final snapshot is under `ended.<id>`. */
const OPEN = 'open.';

/** The stored snapshots of every open channel in the bucket, in one pass over its `open.` keys. */
export function scanOpenSnapshots(where: Omit<KvScan, 'keys'>): AsyncGenerator<KvValue> {
  return lastValues({ ...where, keys: `${OPEN}>` });
}

/** The channel whose open snapshot is under `key` (a key of `scanOpenSnapshots`). */
export function channelOfOpenSnapshot(key: string): string {
  return key.slice(OPEN.length);
}

function openKey(channelId: string): string {
  return `${OPEN}${channelId}`;
}

function endedKey(channelId: string): string {
  return `ended.${channelId}`;
}

/** Keys of chunks of stream sequences start with this (`seqs.<channel_id>.<index>`). */
const SEQS = 'seqs.';

function chunkKey(channelId: string, index: number): string {
  return `${SEQS}${channelId}.${index}`;
}

/** A stored record checked for its schema, or why it is not one; `key` says where it was found. */
function parsed(
  entry: KvValue,
): { readonly ok: true; readonly record: ChannelSnapshotRecord } | { readonly ok: false; readonly reason: string } {
  const result = parseJson(entry.value, ChannelSnapshotRecordSchema);
  return result.ok ? { ok: true, record: result.value } : { ok: false, reason: result.reason };
}
