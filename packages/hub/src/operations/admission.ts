import { isReplyFormId, isReplyIdOf, formatIssues, repr } from '@ag2net/protocol/internal';
import {
  AccessDeniedError,
  AuthError,
  ChannelState,
  ConflictError,
  EVENT_DATA_SCHEMAS,
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_INVITE_REJECT,
  EV_EXPECTATION_VIOLATED,
  InvalidRequestError,
  NotFoundError,
  ProtocolError,
  isChannelProtocolEvent,
  isParticipant,
  isTerminalChannelState,
  type Envelope,
  type PostAck,
  CloseReason,
} from '@ag2net/protocol';
import { deniedError, type Party } from '../governance/arbiter.js';
import { countsTowardInbox, recipientsOfSubstantive } from '../governance/inbox-counters.js';
import { inboxPending, type InboxDepthDeps } from './inbox-depth.js';
import { attached, type AttachDeps } from './snapshot-attach.js';
import { isPeerCancelRequest } from './peer-cancel.js';
import { afterTaskEvent, checkTaskEvent } from './task-events.js';
import type { AdmittedRef, ChannelRuntime } from '../stores/channel-runtime.js';
import { appendOnce, type Appended } from './append.js';
import { ackOf, activateLocked, beginCloseLocked, type CloseDeps } from './lifecycle.js';
import type { HomeStores, HubEnv, HubPolicies } from '../partition/hub-parts.js';
import type { PartitionPick } from '../partition/partition.js';

/**
 * What admitting an envelope uses: the sender's and recipients' records and the policies, the channel (rebuilt when
 * it ended), its WAL, and what its handshake and lifecycle move on to.
 */
export type AdmissionDeps = AttachDeps &
  CloseDeps &
  InboxDepthDeps &
  Pick<HubPolicies, 'arbiter' | 'rateLimiter'> &
  Pick<HomeStores, 'taskEnds'> &
  PartitionPick<'writer' | 'serial' | 'mayWrite'>;

/**
 * Admits a client's envelope, in AG2's order with ag2net's fixes: the sender is the caller; the sender is
 * registered; the arbiter lets the sender reach its audience (`outbound_to`, `delegation_depth`); the channel exists
 * and takes the event in its state; the sender is a participant; task events name a task of the channel; every
 * recipient's inbox has room (`max_pending`); the adapter accepts it; the sender's rate allows it. Then: stamp,
 * append to the WAL (exactly once), fold, and act on the adapter's verdict. A retried post (same envelope id) gets the
 * original ack and is not admitted again.
 */
export async function postEnvelope(ctx: AdmissionDeps, callerId: string, envelope: Envelope): Promise<PostAck> {
  if (envelope.sender_id !== callerId) {
    throw new AuthError(`sender_id ${repr(envelope.sender_id)} does not match the caller ${repr(callerId)}`);
  }
  const sender = ctx.registry.get(envelope.sender_id);
  if (sender === undefined) throw new NotFoundError(`sender not registered: ${envelope.sender_id}`);
  checkEventData(envelope);
  checkReplyId(envelope);
  await checkOutbound(ctx, envelope, sender);
  const rt = ctx.partition.channels.require(envelope.channel_id);
  return ctx.partition.serial.run(envelope.channel_id, () => admitLocked(ctx, rt, envelope));
}

async function admitLocked(ctx: AdmissionDeps, rt: ChannelRuntime, envelope: Envelope): Promise<PostAck> {
  // An ended channel's ids are in its final snapshot: a retry of its last posts still gets the original ack.
  const known = await attached(ctx, rt);
  const previous = envelope.envelope_id === '' ? undefined : known.envelopeIds.get(envelope.envelope_id);
  if (previous !== undefined) return retriedAck(ctx, known, { envelope, previous });
  const { adapter, metadata } = rt;
  const peerCancel =
    !isParticipant(metadata, envelope.sender_id) &&
    isPeerCancelRequest(envelope, metadata, ctx.tasks.get(envelope.task_id ?? ''));
  checkChannelAccepts(rt, envelope, peerCancel);
  if (adapter === null || rt.state === null) {
    throw new ProtocolError(
      `channel ${repr(metadata.channel_id)} has no registered adapter (manifest ${repr(metadata.manifest.type)}@v${metadata.manifest.version})`,
    );
  }
  const handshake = envelope.event_type === EV_CHANNEL_INVITE_ACK || envelope.event_type === EV_CHANNEL_INVITE_REJECT;
  checkTaskEvent(ctx, rt, envelope);
  if (!handshake) {
    await checkInboxes(ctx, rt, envelope);
    adapter.validateSend(metadata, envelope, rt.state);
  }
  const rate = ctx.registry.require(envelope.sender_id).rule.limits.rate;
  if (!handshake) takeRateToken(ctx, envelope, rate);
  // Another writer's entries folded during the append may change what this post may do: check it again, as it was.
  const recheck = (now: ChannelRuntime): void => {
    checkChannelAccepts(now, envelope, peerCancel);
    checkTaskEvent(ctx, now, envelope);
    if (!handshake && now.adapter !== null && now.state !== null)
      now.adapter.validateSend(now.metadata, envelope, now.state);
  };
  let appended: Appended;
  try {
    if (peerCancel) await claimPeerCancel(ctx, rt, envelope);
    appended = await appendOnce(ctx, rt, { draft: { ...envelope, sequence: undefined }, recheck });
  } catch (err) {
    if (!handshake) ctx.rateLimiter.refund(envelope.sender_id, rate);
    throw err;
  }
  const admitted = appended.envelope;
  const ack = { envelope_id: admitted.envelope_id, sequence: admitted.sequence ?? 0, created_at: admitted.created_at };
  if (!appended.fresh) {
    // A retry of a post admitted before (older than the id window, or admitted by another writer): ack it, once.
    if (!handshake) ctx.rateLimiter.refund(envelope.sender_id, rate);
    return ack;
  }
  if (handshake) {
    await onHandshakeReply(ctx, rt, admitted);
    return ack;
  }
  await afterTaskEvent(ctx, admitted);
  if (rt.state !== null) {
    const verdict = adapter.onAccepted(rt.metadata, admitted, rt.state);
    if (verdict.nextState === ChannelState.Closing || verdict.nextState === ChannelState.Closed) {
      await beginCloseLocked(ctx, rt, verdict.autoCloseReason || CloseReason.ClosedByAdapter);
    }
  }
  return ack;
}

/**
 * AG2's inbox gate, for content only (protocol events pass, so a full inbox never blocks a handshake): every
 * registered recipient's pending count must be under its `max_pending`.
 */
async function checkInboxes(
  ctx: InboxDepthDeps & Pick<HubPolicies, 'arbiter'>,
  rt: ChannelRuntime,
  envelope: Envelope,
): Promise<void> {
  if (!countsTowardInbox(envelope)) return;
  for (const id of recipientsOfSubstantive(envelope, rt.metadata)) {
    const recipient = ctx.registry.get(id);
    if (recipient === undefined) continue;
    const pending = await inboxPending(ctx, { agentId: id, rule: recipient.rule }, rt.metadata);
    const decision = await ctx.arbiter.authorizeInbox({ envelope, recipient, pending });
    if (!decision.allow) throw deniedError(decision);
  }
}

/** `Rule.limits.rate`, which AG2 declared but never enforced: one token per admitted envelope. */
function takeRateToken(
  ctx: Pick<HubEnv, 'clock'> & Pick<HomeStores, 'registry'> & Pick<HubPolicies, 'rateLimiter'>,
  envelope: Envelope,
  rate: Party['rule']['limits']['rate'],
): void {
  const verdict = ctx.rateLimiter.take(envelope.sender_id, rate, ctx.clock.now());
  if (verdict.ok) return;
  const name = ctx.registry.nameOf(envelope.sender_id);
  throw new AccessDeniedError(
    `sender ${repr(name)} exceeded rate limit (${rate.per_minute}/min, burst ${rate.burst || rate.per_minute})`,
    { details: { retry_after_ms: verdict.retryAfterMs } },
  );
}

/** Built-in event types must carry their `event_data` shape; custom types pass untouched. */
function checkEventData(envelope: Envelope): void {
  const schema = EVENT_DATA_SCHEMAS[envelope.event_type];
  if (schema === undefined) return;
  const parsed = schema.safeParse(envelope.event_data);
  if (!parsed.success) {
    throw new InvalidRequestError(formatIssues(`event_data of ${envelope.event_type} is invalid`, parsed.error.issues));
  }
}

/**
 * AG2's outbound gate, before the channel lookup: the arbiter sees the registered agents the audience names (a
 * broadcast names none) and the envelope's delegation depth.
 */
async function checkOutbound(
  ctx: Pick<HomeStores, 'registry'> & Pick<HubPolicies, 'arbiter'>,
  envelope: Envelope,
  sender: Party,
): Promise<void> {
  const recipients: Party[] = [];
  for (const rid of new Set(envelope.audience ?? [])) {
    const recipient = rid === envelope.sender_id ? undefined : ctx.registry.get(rid);
    if (recipient !== undefined) recipients.push(recipient);
  }
  const decision = await ctx.arbiter.authorizeSend({ envelope, sender, recipients });
  if (!decision.allow) throw deniedError(decision);
}

/**
 * AG2's refusal of a send by a non-participant of an active channel: the adapter's own refusal of the sender where it
 * has one (`conversation channel '<id>' only accepts sends from participants, got …`, `discussion channel '<id>'
 * expects … to speak, got …`), else AG2 1.2.1's `channel '<id>' only accepts sends from participants, got '<sender>'`.
 * Shared by the access rule of `post` and admission, so both answer alike.
 */
export function nonParticipantRefusal(
  channel: Pick<ChannelRuntime, 'metadata' | 'adapter' | 'state'>,
  envelope: Envelope,
): ProtocolError {
  const { metadata, adapter, state } = channel;
  if (adapter !== null && state !== null) {
    try {
      adapter.validateSend(metadata, envelope, state);
    } catch (err) {
      if (err instanceof ProtocolError) return err;
      throw err;
    }
  }
  return new ProtocolError(
    `channel ${repr(metadata.channel_id)} only accepts sends from participants, got ${repr(envelope.sender_id)}`,
  );
}

/**
 * State, protocol-event and membership checks that AG2 lacks (sender authenticity, participants only); `peerCancel`
 * lets a non-participant's cancel request through (`isPeerCancelRequest`).
 */
function checkChannelAccepts(rt: ChannelRuntime, envelope: Envelope, peerCancel: boolean): void {
  const { metadata } = rt;
  // Quoted only when refusing: `repr` walks the id, and the accepting path is the hot one.
  const cid = (): string => repr(metadata.channel_id);
  if (isTerminalChannelState(metadata.state)) throw new ProtocolError(`channel ${cid()} is ${metadata.state}`);
  const type = envelope.event_type;
  if (type === EV_CHANNEL_INVITE_ACK || type === EV_CHANNEL_INVITE_REJECT) {
    if (metadata.state !== ChannelState.Pending) {
      throw new ProtocolError(`channel ${cid()} is not awaiting invite replies (state=${metadata.state})`);
    }
    if (!metadata.pending_acks.includes(envelope.sender_id)) {
      throw new ProtocolError(`channel ${cid()} has no pending invite for ${repr(envelope.sender_id)}`);
    }
    return;
  }
  if (isChannelProtocolEvent(type) || type === EV_EXPECTATION_VIOLATED) {
    throw new ProtocolError(`${type} events are written by the hub`);
  }
  if (metadata.state !== ChannelState.Active) {
    throw new ProtocolError(`channel ${cid()} not active (state=${metadata.state})`);
  }
  if (!peerCancel && !isParticipant(metadata, envelope.sender_id)) throw nonParticipantRefusal(rt, envelope);
  for (const member of envelope.audience ?? []) {
    if (!isParticipant(metadata, member)) {
      throw new ProtocolError(`audience member ${repr(member)} is not a participant of channel ${cid()}`);
    }
  }
}

/**
 * A post whose envelope id this channel already admitted: a retry of the same post gets the original ack; anyone
 * else proposing that id gets `conflict` (the stored envelope at its stream sequence says who sent it).
 */
async function retriedAck(
  ctx: PartitionPick<'writer'>,
  rt: ChannelRuntime,
  retry: { readonly envelope: Envelope; readonly previous: AdmittedRef },
): Promise<PostAck> {
  const { envelope, previous } = retry;
  const streamSeq = rt.streamSeqs[previous.sequence - 1];
  const stored = streamSeq === undefined ? null : await ctx.partition.writer.at(streamSeq);
  if (
    stored !== null &&
    stored.envelope.envelope_id === envelope.envelope_id &&
    stored.envelope.sender_id === envelope.sender_id
  ) {
    return ackOf(envelope.envelope_id, previous);
  }
  throw new ConflictError(
    `envelope_id ${repr(envelope.envelope_id)} is already taken in channel ${repr(rt.metadata.channel_id)}`,
  );
}

/**
 * Reply ids (`r-…`, `rh-…`) belong to the agent answering a trigger: only that agent, naming the trigger as its
 * causation, may use one, so that nobody can take an agent's answer slot in any channel before it answers.
 */
function checkReplyId(envelope: Envelope): void {
  const id = envelope.envelope_id;
  if (id === '' || !isReplyFormId(id) || isReplyIdOf(id, envelope.sender_id, envelope.causation_id)) return;
  throw new InvalidRequestError(
    `envelope_id ${repr(id)} is reserved for an agent's reply and is not the reply id of ${repr(envelope.sender_id)} to causation ${repr(envelope.causation_id)}`,
  );
}

/**
 * A peer's cancel request is admitted once per sender and task (AG2 1.2.1): the claim is stored before the append,
 * holding this envelope's id, so a retry of the same post (its answer lost) goes on and any other one is refused with
 * AG2's words. A post without an id gets one here, since the claim must name it.
 */
async function claimPeerCancel(
  ctx: Pick<HubEnv, 'clock' | 'ids'> & Pick<HomeStores, 'tasks'>,
  rt: ChannelRuntime,
  envelope: Envelope,
): Promise<void> {
  if (envelope.envelope_id === '') envelope.envelope_id = ctx.ids(ctx.clock.now());
  const taskId = envelope.task_id ?? '';
  if (await ctx.tasks.claimPeerCancel(taskId, envelope.sender_id, envelope.envelope_id)) return;
  throw new ProtocolError(
    `channel ${repr(rt.metadata.channel_id)} only accepts sends from participants, got ${repr(envelope.sender_id)}`,
  );
}

/** An invitee answered: record it; open the channel when nobody is pending, close it on a reject. Locked. */
async function onHandshakeReply(ctx: CloseDeps, rt: ChannelRuntime, reply: Envelope): Promise<void> {
  const rejected = reply.event_type === EV_CHANNEL_INVITE_REJECT;
  rt.metadata = {
    ...rt.metadata,
    pending_acks: rt.metadata.pending_acks.filter((id) => id !== reply.sender_id),
    rejected_by: rejected ? [...rt.metadata.rejected_by, reply.sender_id] : rt.metadata.rejected_by,
  };
  await ctx.partition.channels.persist(rt.metadata);
  if (rejected) await beginCloseLocked(ctx, rt, CloseReason.InviteRejected);
  else if (rt.metadata.pending_acks.length === 0 && rt.metadata.rejected_by.length === 0) await activateLocked(ctx, rt);
}
