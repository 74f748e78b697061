import type { HubAdapter } from '@ag2net/adapters';
import type { ChannelMetadata, Envelope, HubNames } from '@ag2net/protocol';
import { setImmediate } from 'node:timers/promises';
import { newRuntime, type ChannelRuntime } from '../stores/channel-runtime.js';
import { countsTowardInbox } from '../governance/inbox-counters.js';
import { channelFields } from '../base/log-names.js';
import type { Quarantine } from '../base/quarantined-record.js';
import { checkWalMessage, getWalRange, lastWalMessage, scanWal, walMessageAt, type RawWalMessage } from './wal-scan.js';
import { restoreRuntime, type ChannelSnapshotRecord } from '../stores/snapshot-record.js';
import type { LoadedSnapshot } from '../stores/snapshot-store.js';
import type { HubEnv } from '../partition/hub-parts.js';
import type { PartitionPick } from '../partition/partition.js';

/** Tails up to this many envelopes are read one leader read at a time; longer ones with an ordered consumer. */
export const SHORT_TAIL = 32;

/** Longest stretch of folding without a turn of the event loop, ms: the lease is renewed meanwhile. */
const YIELD_EVERY_MS = 50;

/** Gives timers (lease renewal) a turn when folding has held the event loop for `YIELD_EVERY_MS`. */
export class Yielder {
  #last = performance.now();

  async maybe(): Promise<void> {
    if (performance.now() - this.#last <= YIELD_EVERY_MS) return;
    await setImmediate();
    this.#last = performance.now();
  }
}

/** How `rebuildChannel` folds one checked envelope of the channel's log into its runtime. */
export type FoldEntry = (rt: ChannelRuntime, envelope: Envelope, streamSeq: number) => void;

/** Options of `rebuildChannel`. */
export interface RebuildOptions {
  readonly quarantine: Quarantine;
  readonly fold: FoldEntry;
  readonly yielder: Yielder;
  /** The snapshots loaded already, by channel id (hydrate loads the open channels' at once); else each is read. */
  readonly snapshots?: ReadonlyMap<string, LoadedSnapshot>;
  /** Called with a runtime restored from a snapshot, before the envelopes after it are folded. */
  readonly onRestored?: (rt: ChannelRuntime) => void;
}

/** What reading a channel's log uses. */
export type WalReadDeps = Pick<HubEnv, 'js' | 'jsm' | 'names'>;

/** What rebuilding a channel uses: the log, the channel protocols, the log of what is wrong, the snapshots. */
export type RebuildDeps = WalReadDeps & Pick<HubEnv, 'adapters' | 'logger'> & PartitionPick<'snapshots'>;

/** One channel rebuilt from NATS, or on its way: restored (or fresh), with the entries after that still to fold. */
export interface Rebuilt {
  readonly rt: ChannelRuntime;
  /** Whether a snapshot was restored (else the log is folded from its start). */
  readonly restored: boolean;
  /** The stream sequences of the channel's entries to fold: `from` through `to` (none when `from > to`). */
  readonly from: number;
  readonly to: number;
  /** How many entries that is by the tail's own header (infinite when the tail has none). */
  readonly expected: number;
  /** Envelopes folded so far after the snapshot (or from the start). */
  folded: number;
  /** The last folded envelope that counts toward inboxes (content), if any was folded. */
  lastSubstantive: Envelope | undefined;
}

/**
 * Rebuilds one channel: `prepareChannel`, then its entries after the snapshot read by its own subject
 * (`foldChannelTail`).
 */
export async function rebuildChannel(
  ctx: RebuildDeps,
  metadata: ChannelMetadata,
  options: RebuildOptions,
): Promise<Rebuilt> {
  const rebuilt = await prepareChannel(ctx, metadata, options);
  await foldChannelTail(ctx, rebuilt, options);
  return rebuilt;
}

/**
 * Starts one channel's runtime on top of its KV metadata: its snapshot, if there is one and the log agrees with it
 * (one KV read and one or two leader reads of the WAL), else a fresh runtime; and says which of the channel's
 * entries are left to fold. A snapshot that does not parse or does not match the log is quarantined and ignored.
 */
export async function prepareChannel(
  ctx: RebuildDeps,
  metadata: ChannelMetadata,
  options: RebuildOptions,
): Promise<Rebuilt> {
  const channelId = metadata.channel_id;
  const adapter = ctx.adapters.find(metadata.manifest.type, metadata.manifest.version) ?? null;
  const [loaded, tail] = await Promise.all([
    options.snapshots === undefined
      ? ctx.partition.snapshots.load(channelId)
      : (options.snapshots.get(channelId) ?? null),
    lastWalMessage(ctx.jsm, ctx.names, ctx.names.wal(channelId)),
  ]);
  let rt: ChannelRuntime | null = null;
  if (loaded !== null) {
    const reason = loaded.ok ? await mismatch(ctx, loaded.snapshot.record, tail) : loaded.reason;
    if (loaded.ok && reason === null) {
      rt = restoreRuntime(metadata, adapter, loaded.snapshot);
      options.onRestored?.(rt);
    } else {
      options.quarantine({ source: 'snapshots', key: loaded.key, seq: loaded.revision, reason: reason ?? 'invalid' });
    }
  }
  const restored = rt !== null;
  rt ??= newRuntime(metadata, adapter, initialState(ctx, metadata, adapter));
  const to = tail?.streamSeq ?? 0;
  const header = tail?.sequence ?? null;
  const expected = to <= rt.lastStreamSeq ? 0 : header === null ? Infinity : Number(header) - rt.streamSeqs.length;
  return { rt, restored, from: rt.lastStreamSeq + 1, to, expected, folded: 0, lastSubstantive: undefined };
}

/**
 * Folds a prepared channel's remaining entries, read by its subject only: one leader read per entry when they are
 * few (`SHORT_TAIL`), else an ordered consumer filtered to the channel's subject.
 */
export async function foldChannelTail(ctx: WalReadDeps, rebuilt: Rebuilt, options: RebuildOptions): Promise<void> {
  if (rebuilt.from > rebuilt.to) return;
  const range = {
    subject: ctx.names.wal(rebuilt.rt.metadata.channel_id),
    fromStreamSeq: rebuilt.from,
    toStreamSeq: rebuilt.to,
  };
  const messages =
    rebuilt.expected <= SHORT_TAIL ? getWalRange(ctx.jsm, ctx.names, range) : scanWal(ctx.js, ctx.names, range);
  const foldEntry = entryFolder(ctx.names, options);
  for await (const raw of messages) {
    await options.yielder.maybe();
    foldEntry(rebuilt, raw);
  }
}

/**
 * Folds the remaining entries of many channels in one ordered pass over the WAL from the oldest entry any of them
 * needs: what a filtered consumer per channel would cost the server (nats-server 2.9 finds a subject's next entry by
 * scanning) grows with the number of channels, one pass does not. Entries of other channels are skipped unread.
 */
export async function foldTailsInOnePass(
  ctx: WalReadDeps,
  channels: readonly Rebuilt[],
  options: RebuildOptions,
): Promise<void> {
  const bySubject = new Map(channels.map((c) => [ctx.names.wal(c.rt.metadata.channel_id), c]));
  const foldEntry = entryFolder(ctx.names, options);
  // Not `Math.min(...)`: spread into arguments, a few hundred thousand channels overflow the stack.
  const from = channels.reduce((least, c) => Math.min(least, c.from), Infinity);
  const to = channels.reduce((most, c) => Math.max(most, c.to), 0);
  for await (const raw of scanWal(ctx.js, ctx.names, {
    subject: ctx.names.walAll,
    fromStreamSeq: from,
    toStreamSeq: to,
  })) {
    await options.yielder.maybe();
    const rebuilt = bySubject.get(raw.subject);
    if (rebuilt !== undefined && raw.streamSeq >= rebuilt.from && raw.streamSeq <= rebuilt.to) {
      foldEntry(rebuilt, raw);
    }
  }
}

/**
 * Folds one entry of the channel's log if the hub wrote it as the channel's next envelope; anything else is
 * quarantined and only moves the channel's tail, since the next append is checked against the tail.
 */
function entryFolder(names: HubNames, options: RebuildOptions): (rebuilt: Rebuilt, raw: RawWalMessage) => void {
  return (rebuilt, raw) => {
    const { rt } = rebuilt;
    const envelope = nextEnvelope(names, rt, raw);
    if (typeof envelope === 'string') {
      rt.lastStreamSeq = raw.streamSeq;
      options.quarantine({ source: 'wal', key: raw.subject, seq: raw.streamSeq, reason: envelope });
      return;
    }
    options.fold(rt, envelope, raw.streamSeq);
    rebuilt.folded += 1;
    if (countsTowardInbox(envelope)) rebuilt.lastSubstantive = envelope;
  };
}

/** Why the log does not hold what the snapshot says it covers, or `null` when it does. */
async function mismatch(
  ctx: Pick<HubEnv, 'jsm' | 'names'>,
  record: ChannelSnapshotRecord,
  tail: RawWalMessage | null,
): Promise<string | null> {
  const subject = ctx.names.wal(record.channel_id);
  if (tail === null) return 'the channel has no WAL entries';
  if (tail.streamSeq < record.stream_seq) {
    return `the channel's log ends at stream sequence ${tail.streamSeq}, before the snapshot's ${record.stream_seq}`;
  }
  const at = tail.streamSeq === record.stream_seq ? tail : await walMessageAt(ctx.jsm, ctx.names, record.stream_seq);
  if (at === null || at.subject !== subject) return `stream sequence ${record.stream_seq} is not the channel's`;
  const checked = checkWalMessage(ctx.names, at);
  if (!checked.ok) return `stream sequence ${record.stream_seq}: ${checked.reason}`;
  const { envelope } = checked;
  if (envelope.envelope_id !== record.last_envelope_id || envelope.sequence !== record.sequence) {
    return `the log holds ${envelope.envelope_id} (sequence ${envelope.sequence ?? 'none'}) at stream sequence ${record.stream_seq}, the snapshot ${record.last_envelope_id} (sequence ${record.sequence})`;
  }
  return null;
}

/**
 * The envelope of a WAL message of the channel if the hub wrote it as the channel's next: the hub's headers, a
 * valid envelope on its channel's subject, the next sequence; otherwise why not.
 */
function nextEnvelope(names: HubNames, rt: ChannelRuntime, raw: RawWalMessage): Envelope | string {
  const checked = checkWalMessage(names, raw);
  if (!checked.ok) return checked.reason;
  const expected = rt.streamSeqs.length + 1;
  if (checked.envelope.sequence !== expected) {
    return `sequence ${checked.envelope.sequence ?? 'none'} where the channel's next is ${expected}`;
  }
  return checked.envelope;
}

function initialState(ctx: Pick<HubEnv, 'logger'>, metadata: ChannelMetadata, adapter: HubAdapter | null) {
  try {
    return adapter?.initialState(metadata) ?? null;
  } catch (err) {
    ctx.logger.error({ err, ...channelFields(metadata) }, 'stored channel has knobs its adapter rejects');
    return null;
  }
}
