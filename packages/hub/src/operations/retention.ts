import { AuditKind, ErrorReason, NotFoundError, isTerminalChannelState, type ChannelMetadata } from '@ag2net/protocol';
import { isoAt } from '../base/clock.js';
import { channelFields } from '../base/log-names.js';
import type { ChannelRuntime } from '../stores/channel-runtime.js';
import { endedAtMs } from '../stores/channel-table.js';
import type { HomeStores, HubEnv } from '../partition/hub-parts.js';
import type { PartitionPick } from '../partition/partition.js';

/** How many ended channels one sweep removes the history of, at most: a sweep's work stays bounded. */
export const RETENTION_BATCH = 16;

/** What telling whether a channel's history expired uses. */
export type HistoryDeps = Pick<HubEnv, 'retainClosedMs' | 'clock'> & PartitionPick<'channels'>;

/** What removing ended channels' history uses. */
export type RetentionDeps = HistoryDeps &
  Pick<HubEnv, 'names' | 'jsm' | 'logger'> &
  Pick<HomeStores, 'audit'> &
  PartitionPick<'lease' | 'serial' | 'snapshots' | 'deliveredThrough'>;

/**
 * When the channel's history expired: its tombstone's `expired_at`, or, for an ended channel whose retention ran out
 * and whose removal is still to come, the time it ran out (`closed_at` + the retention: what its tombstone will say).
 * `null` while its history is kept. From that moment on every read of its history answers `historyExpired`, so reads
 * do not depend on how far a removal got (one interrupted by a failover, say).
 */
export function historyExpiredAt(ctx: HistoryDeps, rt: ChannelRuntime): string | null {
  const { metadata } = rt;
  const tombstone = ctx.partition.channels.expiredAt(metadata.channel_id);
  if (tombstone !== null) return tombstone;
  if (ctx.retainClosedMs === null || !isTerminalChannelState(metadata.state)) return null;
  const due = endedAtMs(metadata) + ctx.retainClosedMs;
  return due <= ctx.clock.now() ? isoAt(due) : null;
}

/**
 * The answer to a read of a channel whose history expired (`readWal`, `adapterState`): `not_found` with
 * `details.reason` `expired` and `details.expired_at`, only ever to a participant or the operator (the RPC server
 * answers anyone else as for a channel that does not exist).
 */
export function historyExpired(channelId: string, expiredAt: string): NotFoundError {
  return new NotFoundError(`the history of channel ${channelId} expired at ${expiredAt}`, {
    details: { reason: ErrorReason.HistoryExpired, channel_id: channelId, expired_at: expiredAt },
  });
}

/**
 * The channel's metadata as `getChannel` and `listChannels` answer it: with `expired_at` once its history expired
 * (`historyExpiredAt`), so that the metadata says what a read of its history would answer.
 */
export function metadataOf(ctx: HistoryDeps, rt: ChannelRuntime): ChannelMetadata {
  const expiredAt = historyExpiredAt(ctx, rt);
  return expiredAt === null ? rt.metadata : { ...rt.metadata, expired_at: expiredAt };
}

/** Throws `historyExpired` when the channel's history expired. */
export function requireHistory(ctx: HistoryDeps, rt: ChannelRuntime): void {
  const expiredAt = historyExpiredAt(ctx, rt);
  if (expiredAt !== null) throw historyExpired(rt.metadata.channel_id, expiredAt);
}

/**
 * History retention (`HubOptions.retainClosedMs`), one sweep's share: for up to `RETENTION_BATCH` ended channels whose
 * retention ran out, oldest first, removes their history and leaves a tombstone. Only while this hub holds the lease;
 * each removal is idempotent, so one a failover interrupted is completed by the next holder's sweep.
 */
export async function expireHistories(ctx: RetentionDeps, now: number): Promise<void> {
  const retainMs = ctx.retainClosedMs;
  if (retainMs === null) {
    ctx.partition.channels.retention.off();
    return;
  }
  const queue = ctx.partition.channels.retention;
  if (!queue.begin()) return;
  try {
    for (const channelId of queue.due(now - retainMs, RETENTION_BATCH, now)) {
      if (!ctx.partition.lease.holds()) return;
      try {
        await ctx.partition.serial.run(channelId, () => expireHistoryLocked(ctx, channelId));
        queue.succeeded();
      } catch (err) {
        const failures = queue.failed(now);
        // Once per run of failures (a missing purge right fails every channel): the pause keeps the rest quiet.
        if (failures === 1) ctx.logger.warn({ err, channelId }, 'channel history expiry failed; retention paused');
        else ctx.logger.debug({ err, channelId, failures }, 'channel history expiry failed; retention paused');
        return;
      }
    }
  } finally {
    queue.end();
  }
}

/**
 * Removes one ended channel's history, in its serial slot: once delivery has fanned out its last WAL entry (its close
 * notice and the audit records it implies), its snapshots, then every message on its WAL subject (a JetStream purge
 * by subject), then its `channel_history_removed` audit record, then the tombstone. A step already done is a no-op,
 * so a removal cut short by a failover is completed by the next lease holder. Nothing happens without the lease.
 */
async function expireHistoryLocked(ctx: RetentionDeps, channelId: string): Promise<void> {
  const rt = ctx.partition.channels.get(channelId);
  if (rt === undefined || !isTerminalChannelState(rt.metadata.state)) return;
  const expiredAt = historyExpiredAt(ctx, rt);
  if (expiredAt === null || ctx.partition.channels.expiredAt(channelId) !== null) return;
  const subject = ctx.names.wal(channelId);
  const last = await ctx.jsm.streams.getMessage(ctx.names.walStream, { last_by_subj: subject });
  if (last !== null && last.seq > ctx.partition.deliveredThrough) return;
  if (!ctx.partition.lease.holds()) return;
  await ctx.partition.snapshots.remove(channelId);
  if (!ctx.partition.lease.holds()) return;
  const { purged } = await ctx.jsm.streams.purge(ctx.names.walStream, { filter: subject });
  if (!ctx.partition.lease.holds()) return;
  // Before the tombstone, so that a removal is audited at least once: one completed after a failover writes the same
  // id again (a duplicate the stream drops within its window; after it, a second record with what that purge removed).
  await ctx.audit.recordAfter(
    AuditKind.ChannelHistoryRemoved,
    { channel_id: channelId, closed_at: rt.metadata.closed_at, expired_at: expiredAt, purged },
    { id: `channel_history_removed.${channelId}` },
  );
  await ctx.partition.channels.expire(rt, expiredAt);
  ctx.logger.info({ ...channelFields(rt.metadata), expiredAt, purged }, 'channel history expired');
}
