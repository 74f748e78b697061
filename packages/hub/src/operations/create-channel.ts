import { buildParticipants } from '@ag2net/adapters/internal';
import {
  ChannelMetadataSchema,
  ChannelState,
  EV_CHANNEL_INVITE,
  NotFoundError,
  ProtocolError,
  createEnvelope,
  isTerminalChannelState,
  parseDuration,
  type ChannelManifest,
  type ChannelMetadata,
  CloseReason,
} from '@ag2net/protocol';
import { type HubRequestParsed, repr } from '@ag2net/protocol/internal';
import { isoAt } from '../base/clock.js';
import { deniedError } from '../governance/arbiter.js';
import { newRuntime, type ChannelRuntime } from '../stores/channel-runtime.js';
import { checkInviteInboxes, type InboxDepthDeps } from './inbox-depth.js';
import { activateLocked, appendLocked, beginCloseLocked, type CloseDeps } from './lifecycle.js';
import { resolveGraphNames, resolveParticipants } from '../stores/resolve-names.js';
import { agentFields, channelFields } from '../base/log-names.js';
import type { HomeStores, HubEnv, HubPolicies } from '../partition/hub-parts.js';
import type { PartitionPick } from '../partition/partition.js';

type CreateRequest = HubRequestParsed<'createChannel'>;

/** What opening a channel uses: the creator's and invitees' records, the policies, the channel protocols, the WAL. */
export type CreateChannelDeps = CloseDeps &
  InboxDepthDeps &
  Pick<HubEnv, 'adapters'> &
  Pick<HubPolicies, 'arbiter'> &
  Pick<HomeStores, 'channelIndex'> &
  PartitionPick<'serial' | 'owns'>;

/** The workflow channel type, whose `knobs.graph` names agents. */
const WORKFLOW_TYPE = 'workflow';

/**
 * Opens a channel (AG2's `create_channel`, same checks and messages): the creator is registered; participants are
 * listed once and registered; an adapter exists; the rules allow it; the adapter accepts the participants and knobs.
 * Participants and the agents a workflow graph names may be given by passport name: they are stored as ids.
 * Then every invitee gets an invite, and the call resolves once all have acked, or fails when one rejects or the ack
 * timeout passes. A retry with the same `channel_id` waits for the channel it already created.
 */
export async function createChannel(
  ctx: CreateChannelDeps,
  creatorId: string,
  request: CreateRequest,
): Promise<ChannelMetadata> {
  const creator = ctx.registry.get(creatorId);
  if (creator === undefined) throw new NotFoundError(`creator not registered: ${creatorId}`);
  const req: CreateRequest = {
    ...request,
    participants: resolveParticipants(ctx.registry, request.participants),
    knobs: request.type === WORKFLOW_TYPE ? resolveGraphNames(ctx.registry, request.knobs) : request.knobs,
  };
  if (req.channel_id !== null) {
    const existing = ctx.partition.channels.get(req.channel_id);
    if (existing !== undefined) return awaitExisting(ctx, existing, creatorId);
  }
  if (req.participants.length === 0) throw new ProtocolError('channel requires at least one participant');
  const seen = new Set<string>();
  for (const p of req.participants) {
    if (seen.has(p)) throw new ProtocolError(`participant listed twice: ${repr(p)}`);
    seen.add(p);
  }
  const adapter = ctx.adapters.get(req.type, req.version);
  const invitees = req.participants.filter((p) => p !== creatorId);
  // One open at a time per creator, so that two concurrent creates cannot both pass max_concurrent_channels.
  const made = await ctx.partition.serial.run(`open\u0000${creatorId}`, async () => {
    const raced = req.channel_id === null ? undefined : ctx.partition.channels.get(req.channel_id);
    if (raced !== undefined) return { raced, created: null };
    await checkOpenRules(ctx, { manifest: adapter.manifest, creatorId, inviteeIds: invitees });
    const nowMs = ctx.clock.now();
    const ttlSeconds = parseDuration(req.ttl ?? creator.rule.limits.channel_ttl_default);
    const metadata = ChannelMetadataSchema.parse({
      channel_id: req.channel_id ?? ctx.ids(nowMs),
      manifest: adapter.manifest,
      creator_id: creatorId,
      participants: buildParticipants(creatorId, invitees, isoAt(nowMs)),
      state: ChannelState.Pending,
      created_at: isoAt(nowMs),
      expires_at: ttlSeconds > 0 ? isoAt(nowMs + ttlSeconds * 1000) : null,
      knobs: { ...req.knobs },
      labels: req.intent === null ? { ...req.labels } : { ...req.labels, intent: req.intent },
      pending_acks: invitees,
    });
    adapter.validateCreate(metadata);
    const created = newRuntime(metadata, adapter, adapter.initialState(metadata));
    await checkInviteInboxes(
      ctx,
      metadata,
      invitees.map((id) => invite(created, id)),
    );
    // Stored before it is known in memory: a creation whose write is refused (the lease lapsed) or fails leaves
    // nothing behind, so its retry creates the channel instead of waiting on one that was never stored.
    await ctx.partition.channels.persist(metadata);
    ctx.partition.channels.set(created);
    return { raced: null, created };
  });
  if (made.created === null) return awaitExisting(ctx, made.raced, creatorId);
  const rt = made.created;
  const { metadata } = rt;
  ctx.logger.info(
    { ...channelFields(metadata), creator: agentFields(ctx.registry, creatorId).agent, creatorId },
    'channel created',
  );

  const opened = ctx.partition.waiters.untilOpen(metadata.channel_id);
  await ctx.partition.serial.run(metadata.channel_id, async () => {
    if (invitees.length === 0) {
      await activateLocked(ctx, rt);
      return;
    }
    try {
      for (const invitee of invitees) await appendLocked(ctx, rt, { draft: invite(rt, invitee) });
    } catch (err) {
      opened.catch(() => undefined);
      // A hub that lost its lease leaves the channel to its successor, where the creator's retry (same `channel_id`)
      // finds it pending, not closed by a hub that no longer serves.
      if (ctx.partition.lease.holds()) await beginCloseLocked(ctx, rt, CloseReason.InviteFailed).catch(() => undefined);
      throw err;
    }
  });
  return opened;
}

function invite(rt: ChannelRuntime, invitee: string) {
  const m = rt.metadata;
  return createEnvelope({
    channel_id: m.channel_id,
    sender_id: m.creator_id,
    audience: [invitee],
    event_type: EV_CHANNEL_INVITE,
    event_data: {
      channel_id: m.channel_id,
      manifest_type: m.manifest.type,
      manifest_version: m.manifest.version,
      creator_id: m.creator_id,
      knobs: m.knobs,
      labels: m.labels,
    },
  });
}

async function awaitExisting(
  ctx: PartitionPick<'waiters'>,
  rt: ChannelRuntime,
  creatorId: string,
): Promise<ChannelMetadata> {
  const { metadata } = rt;
  if (metadata.creator_id !== creatorId) {
    throw new ProtocolError(`channel id ${repr(metadata.channel_id)} is already taken`);
  }
  if (metadata.state === ChannelState.Pending) return ctx.partition.waiters.untilOpen(metadata.channel_id);
  if (metadata.state === ChannelState.Active) return metadata;
  const cid = repr(metadata.channel_id);
  const reason = metadata.close_reason;
  if (isTerminalChannelState(metadata.state) || metadata.state === ChannelState.Closing) {
    throw new ProtocolError(
      reason === CloseReason.InviteTimeout
        ? `channel ${cid} ack timeout`
        : `channel ${cid} closed during handshake: ${reason}`,
    );
  }
  return metadata;
}

/**
 * AG2's channel-open check through the arbiter (by default the rules: invitees accept the creator and the channel
 * type, the creator may initiate the type and reach each invitee, and is under its `max_concurrent_channels`).
 */
async function checkOpenRules(
  ctx: Pick<HomeStores, 'registry' | 'channelIndex'> &
    Pick<HubPolicies, 'arbiter'> &
    PartitionPick<'channels' | 'owns'>,
  open: { readonly manifest: ChannelManifest; readonly creatorId: string; readonly inviteeIds: readonly string[] },
): Promise<void> {
  const { manifest, creatorId, inviteeIds } = open;
  const creator = ctx.registry.require(creatorId);
  const invitees = inviteeIds.map((id) => ctx.registry.require(id));
  // This partition's own channels exactly, the other partitions' as far as the channel index has seen them (empty
  // with one partition).
  const openChannels =
    ctx.partition.channels.openCountBy(creatorId) +
    ctx.channelIndex.openCountBy(creatorId, (channelId) => ctx.partition.owns(channelId));
  const decision = await ctx.arbiter.authorizeChannelOpen({ manifest, creator, invitees, openChannels });
  if (!decision.allow) throw deniedError(decision);
}
