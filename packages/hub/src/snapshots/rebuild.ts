import type { ChannelAdapter } from '@ag2net/adapters';
import type { ChannelMetadata, Envelope, HubNames } from '@ag2net/protocol';
import { setImmediate } from 'node:timers/promises';
import { newRuntime, type ChannelRuntime } from '../core/channel-runtime.js';
import type { HubContext } from '../core/context.js';
import { countsTowardInbox } from '../governance/inbox-counters.js';
import type { Quarantine } from '../core/quarantined-record.js';
import {
  checkWalMessage,
  getWalRange,
  lastWalMessage,
  scanWal,
  walMessageAt,
  type RawWalMessage,
} from '../core/wal-scan.js';
import { restoreRuntime, type ChannelSnapshotRecord } from './record.js';

/** Tails up to this many envelopes are read one leader read at a time; longer ones with an ordered consumer. */
const SHORT_TAIL = 32;

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
  /** Called with a runtime restored from a snapshot, before the envelopes after it are folded. */
  readonly onRestored?: (rt: ChannelRuntime) => void;
}

/** One channel rebuilt from NATS. */
export interface Rebuilt {
  readonly rt: ChannelRuntime;
  /** Whether a snapshot was restored (else the log was folded from its start). */
  readonly restored: boolean;
  /** Envelopes folded after the snapshot (or from the start). */
  readonly folded: number;
  /** The last folded envelope that counts toward inboxes (content), if any was folded. */
  readonly lastSubstantive: Envelope | undefined;
}

/**
 * Rebuilds one channel's runtime on top of its KV metadata: its snapshot, if there is one and the log agrees with
 * it, then the channel's own WAL entries after it (read by subject, never the whole WAL); without a usable snapshot,
 * the channel's whole log. A snapshot that does not parse or does not match the log is quarantined and ignored. A
 * WAL entry the hub did not write as the channel's next envelope is quarantined and only moves the channel's tail.
 */
export async function rebuildChannel(
  ctx: HubContext,
  metadata: ChannelMetadata,
  options: RebuildOptions,
): Promise<Rebuilt> {
  const channelId = metadata.channel_id;
  const subject = ctx.names.wal(channelId);
  const adapter = ctx.adapters.find(metadata.manifest.type, metadata.manifest.version) ?? null;
  const [loaded, tail] = await Promise.all([
    ctx.snapshots.load(channelId),
    lastWalMessage(ctx.jsm, ctx.names, subject),
  ]);
  let rt: ChannelRuntime | null = null;
  if (loaded !== null) {
    const reason = loaded.ok ? await mismatch(ctx, loaded.record, tail) : loaded.reason;
    if (loaded.ok && reason === null) {
      rt = restoreRuntime(metadata, adapter, loaded.record);
      options.onRestored?.(rt);
    } else
      options.quarantine({ source: 'snapshots', key: channelId, seq: loaded.revision, reason: reason ?? 'invalid' });
  }
  const restored = rt !== null;
  rt ??= newRuntime(metadata, adapter, initialState(ctx, metadata, adapter));
  let folded = 0;
  let lastSubstantive: Envelope | undefined;
  if (tail === null || tail.streamSeq <= rt.lastStreamSeq) return { rt, restored, folded, lastSubstantive };
  const range = { subject, fromStreamSeq: rt.lastStreamSeq + 1, toStreamSeq: tail.streamSeq };
  const expected = tail.sequence === null ? Number.POSITIVE_INFINITY : Number(tail.sequence) - rt.streamSeqs.length;
  const messages = expected <= SHORT_TAIL ? getWalRange(ctx.jsm, ctx.names, range) : scanWal(ctx.js, ctx.names, range);
  for await (const raw of messages) {
    await options.yielder.maybe();
    const envelope = nextEnvelope(ctx.names, rt, raw);
    if (typeof envelope === 'string') {
      // Not folded; it still moves the channel's tail, since the next append is checked against the tail.
      rt.lastStreamSeq = raw.streamSeq;
      options.quarantine({ source: 'wal', key: raw.subject, seq: raw.streamSeq, reason: envelope });
      continue;
    }
    options.fold(rt, envelope, raw.streamSeq);
    folded += 1;
    if (countsTowardInbox(envelope)) lastSubstantive = envelope;
  }
  return { rt, restored, folded, lastSubstantive };
}

/** Why the log does not hold what the snapshot says it covers, or `null` when it does. */
async function mismatch(
  ctx: HubContext,
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

function initialState(ctx: HubContext, metadata: ChannelMetadata, adapter: ChannelAdapter | null) {
  try {
    return adapter?.initialState(metadata) ?? null;
  } catch (err) {
    ctx.logger.error({ err, channelId: metadata.channel_id }, 'stored channel has knobs its adapter rejects');
    return null;
  }
}
