import {
  AccessDeniedError,
  ChannelState,
  EV_TEXT,
  createEnvelope,
  isParticipant,
  isTerminalChannelState,
  repr,
  visibleTo,
  type ChannelMetadata,
  type Envelope,
  type HubResponse,
  type PendingTurn,
  CloseReason,
} from '@ag2net/protocol';
import type { HubRequestParsed } from '@ag2net/protocol/internal';
import type { ChannelRuntime } from './channel-runtime.js';
import { causationKey } from './channel-runtime.js';
import type { HubContext } from './context.js';
import { attached } from '../snapshots/attach.js';
import { beginCloseLocked } from './lifecycle.js';
import { jsonBytes, pageBudget, pageOf, type Page } from './paging.js';

/**
 * Closes a channel on a participant's request: it drains (admits nothing new, delivers what it admitted) and then
 * ends `closed` with `reason` (default `explicit_close`). Resolves with the ended channel; an ended channel is
 * returned as it is. Unknown channels are `not_found` (AG2 raised a bare KeyError).
 */
export async function closeChannel(
  ctx: HubContext,
  callerId: string,
  channelId: string,
  reason: string,
): Promise<ChannelMetadata> {
  const rt = ctx.channels.require(channelId);
  requireParticipant(rt, callerId);
  if (isTerminalChannelState(rt.metadata.state)) return rt.metadata;
  const ended = ctx.waiters.untilEnd(channelId);
  await ctx.serial.run(channelId, () => beginCloseLocked(ctx, rt, reason || CloseReason.ExplicitClose));
  if (isTerminalChannelState(rt.metadata.state)) {
    ended.catch(() => undefined);
    return rt.metadata;
  }
  return ended;
}

/** Participants only: nobody reads or closes a channel they are not in. */
export function requireParticipant(rt: ChannelRuntime, agentId: string): void {
  if (!isParticipant(rt.metadata, agentId)) {
    throw new AccessDeniedError(`${repr(agentId)} is not a participant of channel ${repr(rt.metadata.channel_id)}`);
  }
}

/**
 * AG2's `list_channels` over every known channel, terminal ones included, in creation order: one page of at most
 * `limit` channels and `pageBudget` bytes, and the cursor of the next.
 */
export function listChannels(ctx: HubContext, req: HubRequestParsed<'listChannels'>): Page<ChannelMetadata> {
  const all = ctx.channels
    .all()
    .map((rt) => rt.metadata)
    .filter((m) => req.agent_id === null || isParticipant(m, req.agent_id))
    .filter((m) => req.state === null || m.state === req.state);
  return pageOf(all, { ...req, budgetBytes: pageBudget(ctx.nc) });
}

/**
 * The envelopes with sequences `since..until` that the caller may see. Only participants may read a channel, and
 * envelopes whose audience excludes the caller are left out. A page stops at `limit` envelopes or at
 * `pageBudget` bytes of them; `next_since` then says where to continue (`null` when the range is done).
 */
export async function readWal(
  ctx: HubContext,
  callerId: string,
  req: HubRequestParsed<'readWal'>,
): Promise<HubResponse<'readWal'>> {
  const rt = await attached(ctx, ctx.channels.require(req.channel_id));
  requireParticipant(rt, callerId);
  const last = rt.streamSeqs.length;
  const until = Math.min(req.until ?? last, last);
  const envelopes: Envelope[] = [];
  const from = rt.streamSeqs[req.since - 1];
  if (from === undefined || until < req.since) return { envelopes, last_sequence: last, next_since: null };
  const budget = pageBudget(ctx.nc);
  let bytes = 0;
  let next = req.since;
  for await (const entry of ctx.reader.channel(req.channel_id, from, until - req.since + 1)) {
    if (visibleTo(entry.envelope, callerId)) {
      const size = jsonBytes(entry.envelope);
      if (envelopes.length > 0 && bytes + size > budget) break;
      bytes += size;
      envelopes.push(entry.envelope);
    }
    next = (entry.envelope.sequence ?? next) + 1;
    if (envelopes.length >= req.limit) break;
  }
  return { envelopes, last_sequence: last, next_since: next <= until ? next : null };
}

/** The envelope `sender` posted in answer to `causation_id`, if the caller may see it. */
export async function findByCausation(
  ctx: HubContext,
  callerId: string,
  req: HubRequestParsed<'findEnvelopeByCausation'>,
): Promise<Envelope | null> {
  const rt = ctx.channels.require(req.channel_id);
  requireParticipant(rt, callerId);
  const id = rt.causation.get(causationKey(req.sender_id, req.causation_id));
  const ref = id === undefined ? undefined : rt.envelopeIds.get(id);
  const streamSeq = ref === undefined ? undefined : rt.streamSeqs[ref.sequence - 1];
  if (streamSeq === undefined) return null;
  for await (const entry of ctx.reader.channel(req.channel_id, streamSeq, 1)) {
    return visibleTo(entry.envelope, callerId) ? entry.envelope : null;
  }
  return null;
}

/** Whether the caller could post `event_type` (default text) now: AG2's probe through `validateSend`. */
export function canSend(ctx: HubContext, callerId: string, req: HubRequestParsed<'canSend'>): boolean {
  const rt = ctx.channels.get(req.channel_id);
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
export function pendingTurnsFor(ctx: HubContext, agentId: string): PendingTurn[] {
  const turns: PendingTurn[] = [];
  for (const rt of ctx.channels.open()) {
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
