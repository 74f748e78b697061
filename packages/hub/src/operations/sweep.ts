import { ChannelState, CloseReason } from '@ag2net/protocol';
import type { ChannelRuntime } from '../stores/channel-runtime.js';
import { beginCloseLocked, settleHandshakeLocked } from './lifecycle.js';
import { catchUpLocked, type CatchUpDeps } from './append.js';
import { expireHistories, type RetentionDeps } from './retention.js';
import { evaluateExpectationsLocked, expectationsDue, type ExpectationDeps } from './expectations.js';
import { expireDueTasks } from './task-ops.js';
import type { HubEnv } from '../partition/hub-parts.js';
import type { PartitionPick } from '../partition/partition.js';

/** What a sweeper pass uses: the partition's open channels and their deadlines, the tasks, the retention. */
export type SweepDeps = ExpectationDeps &
  RetentionDeps &
  CatchUpDeps &
  Pick<HubEnv, 'inviteAckTimeoutMs'> &
  PartitionPick<'serial'>;

/**
 * One sweeper pass at the clock's current time, for every open channel and task:
 * - a pending channel whose invitees did not all ack within the ack timeout closes with `invite_timeout`;
 * - a channel past `expires_at` ends `expired` with `ttl_expired` (also when a violation is due at the same time);
 * - otherwise the channel's expectations are evaluated and new violations fire;
 * - a task past its `expires_at` ends `expired` with `ttl_expired`;
 * - with a retention (`HubOptions.retainClosedMs`), the history of up to `RETENTION_BATCH` channels that ended longer
 *   ago than it is removed, oldest first (`expireHistories`).
 *
 * The cost grows with the number of open channels and tasks, not with the size of their logs nor the number of ended
 * channels: evaluators read the facts kept at admission, retention looks at the oldest ended channels only. A
 * channel's lock is taken only when something is due in it.
 */
export async function sweep(ctx: SweepDeps): Promise<void> {
  const now = ctx.clock.now();
  for (const rt of ctx.partition.channels.open()) {
    if (rt.metadata.state === ChannelState.Closing) continue;
    if (lifecycleDue(ctx, rt, now) === null && !expectationsDue(ctx, rt, now)) continue;
    await ctx.partition.serial.run(rt.metadata.channel_id, () => sweepChannelLocked(ctx, rt, now));
  }
  await expireDueTasks(ctx, now);
  await expireHistories(ctx, now);
}

async function sweepChannelLocked(
  ctx: ExpectationDeps & CatchUpDeps & Pick<HubEnv, 'inviteAckTimeoutMs'>,
  rt: ChannelRuntime,
  now: number,
): Promise<void> {
  if (rt.metadata.state === ChannelState.Pending && lifecycleDue(ctx, rt, now) === CloseReason.InviteTimeout) {
    // The answers may be in the log already, appended by a writer before this hub (and never seen by it).
    await catchUpLocked(ctx, rt);
    if (await settleHandshakeLocked(ctx, rt)) return;
  }
  const state = rt.metadata.state;
  if (state !== ChannelState.Pending && state !== ChannelState.Active) return;
  const reason = lifecycleDue(ctx, rt, now);
  if (reason !== null) await beginCloseLocked(ctx, rt, reason);
  else await evaluateExpectationsLocked(ctx, rt, now);
}

/** The close reason of a channel whose time is up, or `null`. */
function lifecycleDue(ctx: Pick<HubEnv, 'inviteAckTimeoutMs'>, rt: ChannelRuntime, now: number): string | null {
  const m = rt.metadata;
  if (m.state === ChannelState.Pending && now - Date.parse(m.created_at) >= ctx.inviteAckTimeoutMs) {
    return CloseReason.InviteTimeout;
  }
  if (m.expires_at !== null && Date.parse(m.expires_at) <= now) return CloseReason.TtlExpired;
  return null;
}
