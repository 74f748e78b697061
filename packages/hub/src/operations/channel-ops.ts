import {
  AccessDeniedError,
  ChannelState,
  EV_TEXT,
  createEnvelope,
  isParticipant,
  isTerminalChannelState,
  type ChannelMetadata,
  type Envelope,
  type HubResponse,
  type PendingTurn,
  CloseReason,
} from '@ag2net/protocol';
import { type HubRequestParsed, repr } from '@ag2net/protocol/internal';
import type { AdapterState } from '@ag2net/adapters';
import { isOperator, mayRead, type CheckedCaller } from './access.js';
import type { ChannelRuntime } from '../stores/channel-runtime.js';
import { causationKey } from '../stores/channel-runtime.js';
import { attached, type AttachDeps } from './snapshot-attach.js';
import { beginCloseLocked, type CloseDeps } from './lifecycle.js';
import { metadataOf, requireHistory, type HistoryDeps } from './retention.js';
import { checkWalMessage, scanWal } from './wal-scan.js';
import { jsonBytes, pageBudget, pageOf, type Page } from '../base/paging.js';
import type { HubEnv } from '../partition/hub-parts.js';
import type { PartitionPick } from '../partition/partition.js';

/**
 * Closes a channel on a participant's request (the RPC server let only participants through): it drains (admits
 * nothing new, delivers what it admitted) and then ends `closed` with `reason` (default `explicit_close`). Resolves
 * with the ended channel; an ended channel is returned as it is. Unknown channels are `not_found` (AG2 raised a bare
 * KeyError).
 */
export async function closeChannel(
  ctx: CloseDeps & HistoryDeps & PartitionPick<'serial'>,
  channelId: string,
  reason: string,
): Promise<ChannelMetadata> {
  const rt = ctx.partition.channels.require(channelId);
  if (isTerminalChannelState(rt.metadata.state)) return metadataOf(ctx, rt);
  const ended = ctx.partition.waiters.untilEnd(channelId);
  await ctx.partition.serial.run(channelId, () => beginCloseLocked(ctx, rt, reason || CloseReason.ExplicitClose));
  if (isTerminalChannelState(rt.metadata.state)) {
    ended.catch(() => undefined);
    return rt.metadata;
  }
  return ended;
}

/**
 * Participants only. The RPC server applies this rule to every participant operation before its handler; this is
 * for code paths that act on a channel named by something other than the request's `channel_id`.
 */
export function requireParticipant(rt: ChannelRuntime, agentId: string): void {
  if (!isParticipant(rt.metadata, agentId)) {
    throw new AccessDeniedError(`${repr(agentId)} is not a participant of channel ${repr(rt.metadata.channel_id)}`);
  }
}

/**
 * The channel's adapter state as the caller may see it: all of it for the operator; for a participant, the adapter's
 * `stateFor` view, which leaves out what envelopes outside the participant's audience put there (see the adapter's
 * `stateFor`). `null` when the channel has no adapter.
 */
export async function adapterStateFor(
  ctx: AttachDeps,
  caller: CheckedCaller,
  channelId: string,
): Promise<AdapterState | null> {
  const known = ctx.partition.channels.require(channelId);
  requireHistory(ctx, known);
  const rt = await attached(ctx, known);
  if (rt.adapter === null || rt.state === null) return null;
  return isOperator(caller) ? rt.state : rt.adapter.stateFor(rt.state, caller);
}

/**
 * AG2's `list_channels` over the channels the caller may see (those it is a participant of; every channel for the
 * operator), terminal ones included (with `expired_at` once their history expired), in creation order: one page of
 * at most `limit` channels and `pageBudget` bytes, and the cursor of the next. `agent_id` narrows the list to channels that agent is a participant of too.
 */
export function listChannels(
  ctx: HistoryDeps & Pick<HubEnv, 'nc'>,
  caller: CheckedCaller,
  req: HubRequestParsed<'listChannels'>,
): Page<ChannelMetadata> {
  const all = ctx.partition.channels
    .all()
    .filter(({ metadata: m }) => isOperator(caller) || isParticipant(m, caller))
    .filter(({ metadata: m }) => req.agent_id === null || isParticipant(m, req.agent_id))
    .filter(({ metadata: m }) => req.state === null || m.state === req.state)
    .map((rt) => metadataOf(ctx, rt));
  return pageOf(all, { ...req, budgetBytes: pageBudget(ctx.nc) });
}

/**
 * The envelopes with sequences `since..until` that the caller may see: the RPC server let only participants and the
 * operator through; envelopes whose audience excludes a participant are left out (the operator reads them all), and
 * so is any message on the channel's subject that the hub did not admit. A page stops at `limit` envelopes or at
 * `pageBudget` bytes of them; `next_since` then says where to continue (`null` when the range is done). A channel
 * whose history expired answers `not_found` with `details.reason` `expired` (`historyExpired`).
 */
export async function readWal(
  ctx: AttachDeps & Pick<HubEnv, 'nc'>,
  callerId: string,
  req: HubRequestParsed<'readWal'>,
): Promise<HubResponse<'readWal'>> {
  const known = ctx.partition.channels.require(req.channel_id);
  requireHistory(ctx, known);
  const rt = await attached(ctx, known);
  const last = rt.streamSeqs.length;
  const until = Math.min(req.until ?? last, last);
  const envelopes: Envelope[] = [];
  const from = rt.streamSeqs[req.since - 1];
  if (from === undefined || until < req.since) return { envelopes, last_sequence: last, next_since: null };
  const budget = pageBudget(ctx.nc);
  let bytes = 0;
  let next = req.since;
  for await (const envelope of admittedEnvelopes(ctx, rt, { from, to: rt.streamSeqs[until - 1] ?? from })) {
    if (mayRead(callerId, envelope)) {
      const size = jsonBytes(envelope);
      if (envelopes.length > 0 && bytes + size > budget) break;
      bytes += size;
      envelopes.push(envelope);
    }
    next = (envelope.sequence ?? next) + 1;
    if (envelopes.length >= req.limit) break;
  }
  return { envelopes, last_sequence: last, next_since: next <= until ? next : null };
}

/** The envelope `sender` posted in answer to `causation_id`, if the caller may see it (the operator sees all). */
export async function findByCausation(
  ctx: Pick<HubEnv, 'js' | 'names'> & PartitionPick<'channels'>,
  callerId: string,
  req: HubRequestParsed<'findEnvelopeByCausation'>,
): Promise<Envelope | null> {
  const rt = ctx.partition.channels.require(req.channel_id);
  const id = rt.causation.get(causationKey(req.sender_id, req.causation_id));
  const ref = id === undefined ? undefined : rt.envelopeIds.get(id);
  const streamSeq = ref === undefined ? undefined : rt.streamSeqs[ref.sequence - 1];
  if (streamSeq === undefined) return null;
  for await (const envelope of admittedEnvelopes(ctx, rt, { from: streamSeq, to: streamSeq })) {
    return envelope.envelope_id === id && mayRead(callerId, envelope) ? envelope : null;
  }
  return null;
}

/**
 * The envelopes the hub admitted to the channel at stream sequences `from..to`, in log order. Any other message on
 * the channel's subject (one the hub did not write: no hub headers, no envelope, not at a sequence the hub admitted)
 * is skipped, so no reader is ever shown it and none makes a read fail.
 */
async function* admittedEnvelopes(
  ctx: Pick<HubEnv, 'js' | 'names'>,
  rt: ChannelRuntime,
  range: { readonly from: number; readonly to: number },
): AsyncGenerator<Envelope> {
  const subject = ctx.names.wal(rt.metadata.channel_id);
  for await (const raw of scanWal(ctx.js, ctx.names, { subject, fromStreamSeq: range.from, toStreamSeq: range.to })) {
    const checked = checkWalMessage(ctx.names, raw);
    if (!checked.ok) continue;
    const sequence = checked.envelope.sequence;
    if (sequence !== undefined && rt.streamSeqs[sequence - 1] === raw.streamSeq) yield checked.envelope;
  }
}

/** Whether the caller could post `event_type` (default text) now: AG2's probe through `validateSend`. */
export function canSend(ctx: PartitionPick<'channels'>, callerId: string, req: HubRequestParsed<'canSend'>): boolean {
  const rt = ctx.partition.channels.get(req.channel_id);
  if (rt === undefined || rt.adapter === null || rt.state === null) return false;
  if (rt.metadata.state !== ChannelState.Active || !isParticipant(rt.metadata, callerId)) return false;
  const probe = createEnvelope({
    channel_id: req.channel_id,
    sender_id: callerId,
    event_type: req.event_type ?? EV_TEXT,
    event_data: { text: '' },
  });
  try {
    rt.adapter.validateSend(rt.metadata, probe, rt.state);
    return true;
  } catch {
    return false;
  }
}

/**
 * The turns the hub expects from `agentId` in open channels: the trigger is the envelope that made it their turn;
 * `expected_at` is when it was admitted (for an opening turn, the channel's latest envelope, its `opened`).
 */
export function pendingTurnsFor(ctx: PartitionPick<'channels'>, agentId: string): PendingTurn[] {
  const turns: PendingTurn[] = [];
  for (const rt of ctx.partition.channels.open()) {
    if (rt.adapter === null || rt.state === null || !isParticipant(rt.metadata, agentId)) continue;
    if (rt.metadata.state !== ChannelState.Active) continue;
    const expected = rt.adapter.expectedNext(rt.metadata, rt.state);
    if (expected === null || expected.agentId !== agentId) continue;
    const trigger = expected.triggeringEnvelopeId;
    const ref = trigger === null ? undefined : rt.envelopeIds.get(trigger);
    turns.push({
      channel_id: rt.metadata.channel_id,
      triggering_envelope_id: trigger,
      expected_at: ref?.createdAt ?? (rt.lastCreatedAt || rt.metadata.created_at),
    });
  }
  return turns;
}
