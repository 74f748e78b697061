import type { Envelope } from '@ag2net/protocol';
import { applyAppended, detachedRuntime, type ChannelRuntime } from '../stores/channel-runtime.js';
import { QuarantineLog, type QuarantineDeps } from './quarantine.js';
import { reconcileMetadata } from '../stores/reconcile.js';
import { historyExpiredAt, type HistoryDeps } from './retention.js';
import type { PartitionPick } from '../partition/partition.js';
import { rebuildChannel, Yielder, type RebuildDeps } from './snapshot-rebuild.js';

/** What serving an ended channel from its snapshot or log uses. */
export type AttachDeps = RebuildDeps & QuarantineDeps & HistoryDeps;

/**
 * The full runtime of a channel: the one in memory, or for an ended channel that is detached (only its metadata in
 * memory) one rebuilt from its final snapshot, checked against the log, or from its log when there is no usable
 * snapshot (then a snapshot is written, so the next read is cheap). What a detached channel answers (its log, its
 * adapter state, a retried post's original ack) therefore costs a KV read and a WAL read, and memory holds nothing
 * of ended channels but their metadata. The rebuilt runtime is not kept; it must not be written to.
 */
export async function attached(ctx: AttachDeps, rt: ChannelRuntime): Promise<ChannelRuntime> {
  // A channel whose history expired has none to rebuild (reads answer `historyExpired` before they get here).
  if (!rt.detached || historyExpiredAt(ctx, rt) !== null) return rt;
  const quarantine = new QuarantineLog(ctx);
  // Folding an ended channel again changes nothing else: no inbox counts, no lifecycle.
  const fold = (target: ChannelRuntime, envelope: Envelope, streamSeq: number): void => {
    applyAppended(target, envelope, streamSeq);
    reconcileMetadata(target, envelope);
  };
  const rebuilt = await rebuildChannel(ctx, rt.metadata, { quarantine: quarantine.note, fold, yielder: new Yielder() });
  await quarantine.flush();
  // Not once its retention ran out meanwhile: its removal may be under way, and must not find a snapshot come back.
  if (!rebuilt.restored && rebuilt.rt.streamSeqs.length > 0 && historyExpiredAt(ctx, rt) === null) {
    // Not in the channel's serial slot (the caller may hold it): an ended channel takes no appends to race with.
    await ctx.partition.snapshots.write(rebuilt.rt);
    ctx.partition.snapshots.forget(rt.metadata.channel_id);
  }
  return rebuilt.rt;
}

/**
 * A channel just ended: writes its final snapshot and, once it is stored, keeps only its metadata in memory (see
 * `attached`). If the snapshot cannot be written the channel stays in memory as it is. Locked.
 */
export async function detachEnded(ctx: PartitionPick<'snapshots' | 'channels'>, rt: ChannelRuntime): Promise<void> {
  if (rt.detached || !(await ctx.partition.snapshots.write(rt))) return;
  ctx.partition.snapshots.forget(rt.metadata.channel_id);
  ctx.partition.channels.set(detachedRuntime(rt.metadata, rt.adapter));
}
