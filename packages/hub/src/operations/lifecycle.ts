import { repr } from '@ag2net/protocol/internal';
import {
  ChannelState,
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_EXPIRED,
  EV_CHANNEL_OPENED,
  ProtocolError,
  createEnvelope,
  isTerminalChannelState,
  participantIds,
  type Envelope,
  type EnvelopeInput,
  type PostAck,
  CloseReason,
} from '@ag2net/protocol';
import { detachEnded } from './snapshot-attach.js';
import { expireTasksOfChannel, type TaskChangeDeps } from './task-ops.js';
import { appendUnlessDone, type AppendDeps } from './append.js';
import type { AdmittedRef, ChannelRuntime } from '../stores/channel-runtime.js';
import { channelFields } from '../base/log-names.js';
import type { PartitionPick } from '../partition/partition.js';

export { appendLocked, recordAppended } from './append.js';

/** What opening a channel uses: the append, the channel table and who waits for the channel. */
export type ActivateDeps = AppendDeps & PartitionPick<'channels' | 'waiters'>;

/** What ending a channel once its drain is over uses: also its tasks and its final snapshot. */
export type EndDeps = ActivateDeps & TaskChangeDeps & PartitionPick<'snapshots'>;

/** What starting to end a channel uses: also how far delivery got. */
export type CloseDeps = EndDeps & PartitionPick<'deliveredThrough'>;

/** Appends an envelope the hub writes on the creator's behalf, to every participant. */
export function hubEnvelope(rt: ChannelRuntime, eventType: string, data: Record<string, unknown>): Envelope {
  const input: EnvelopeInput = {
    channel_id: rt.metadata.channel_id,
    sender_id: rt.metadata.creator_id,
    audience: participantIds(rt.metadata),
    event_type: eventType,
    event_data: data,
  };
  return createEnvelope(input);
}

/** The ack an admitted envelope gets (also for a retried post of the same envelope id). */
export function ackOf(envelopeId: string, ref: AdmittedRef): PostAck {
  return { envelope_id: envelopeId, sequence: ref.sequence, created_at: ref.createdAt };
}

/** Every invitee acked: the channel becomes active and `ag2.channel.opened` goes to every participant. Locked. */
export async function activateLocked(ctx: ActivateDeps, rt: ChannelRuntime): Promise<void> {
  const opened = await appendUnlessDone(ctx, rt, {
    draft: hubEnvelope(rt, EV_CHANNEL_OPENED, { channel_id: rt.metadata.channel_id }),
    done: (now) => now.metadata.state !== ChannelState.Pending,
  });
  // Another writer's entries may have opened (or ended) the channel already; what the log says stands.
  if (opened === null && rt.metadata.state !== ChannelState.Active) return;
  rt.metadata = { ...rt.metadata, state: ChannelState.Active };
  await ctx.partition.channels.persist(rt.metadata);
  ctx.partition.waiters.opened(rt.metadata);
  ctx.logger.info(channelFields(rt.metadata), 'channel opened');
}

/**
 * A pending channel whose handshake the log already settled (every invitee's answer folded, the last one appended by
 * a writer that did not get to act on it): it opens when everyone acked, and starts closing `invite_rejected` when
 * someone rejected. `false` while an answer is still missing. Locked.
 */
export async function settleHandshakeLocked(ctx: CloseDeps, rt: ChannelRuntime): Promise<boolean> {
  const { state, pending_acks: pending, rejected_by: rejected } = rt.metadata;
  if (state !== ChannelState.Pending) return true;
  if (rejected.length > 0) {
    await beginCloseLocked(ctx, rt, CloseReason.InviteRejected);
    return true;
  }
  if (pending.length > 0) return false;
  await activateLocked(ctx, rt);
  return true;
}

/**
 * Starts ending a channel: it admits nothing new from now on, finishes delivering what it admitted, then becomes
 * `closed` (or `expired` for `ttl_expired`) with its close envelope. A no-op on a channel that is already closing or ended. Locked.
 */
export async function beginCloseLocked(ctx: CloseDeps, rt: ChannelRuntime, reason: string): Promise<void> {
  const { state, channel_id: channelId } = rt.metadata;
  if (isTerminalChannelState(state) || state === ChannelState.Closing) return;
  if (state === ChannelState.Pending) {
    const message =
      reason === CloseReason.InviteTimeout
        ? `channel ${repr(channelId)} ack timeout`
        : `channel ${repr(channelId)} closed during handshake: ${reason}`;
    ctx.partition.waiters.failedToOpen(channelId, new ProtocolError(message));
  }
  rt.metadata = { ...rt.metadata, state: ChannelState.Closing, close_reason: reason };
  rt.closingAt = rt.streamSeqs.length;
  await ctx.partition.channels.persist(rt.metadata);
  if (ctx.partition.deliveredThrough >= rt.lastStreamSeq) await finishCloseLocked(ctx, rt);
}

/** The drain is over: append the close envelope and mark the channel ended. Idempotent. Locked. */
export async function finishCloseLocked(ctx: EndDeps, rt: ChannelRuntime): Promise<void> {
  if (rt.metadata.state !== ChannelState.Closing) return;
  const final = rt.metadata.close_reason === CloseReason.TtlExpired ? ChannelState.Expired : ChannelState.Closed;
  const eventType = final === ChannelState.Expired ? EV_CHANNEL_EXPIRED : EV_CHANNEL_CLOSED;
  const reason = rt.metadata.close_reason;
  const closeEnvelope = await appendUnlessDone(ctx, rt, {
    draft: hubEnvelope(rt, eventType, { reason, channel_id: rt.metadata.channel_id }),
    done: (now) => isTerminalChannelState(now.metadata.state),
  });
  // `null`: another writer's entries ended the channel already, and folding them set its final state.
  if (closeEnvelope !== null) rt.metadata = { ...rt.metadata, state: final, closed_at: closeEnvelope.created_at };
  rt.closingAt = null;
  rt.causation.clear();
  await ctx.partition.channels.persist(rt.metadata);
  ctx.partition.waiters.ended(rt.metadata);
  ctx.logger.info({ ...channelFields(rt.metadata), reason, state: rt.metadata.state }, 'channel ended');
  await expireTasksOfChannel(ctx, rt.metadata.channel_id);
  await detachEnded(ctx, rt);
}
