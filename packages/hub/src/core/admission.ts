import {
  AccessDeniedError,
  AuthError,
  ChannelState,
  EVENT_DATA_SCHEMAS,
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_INVITE_REJECT,
  InvalidRequestError,
  NotFoundError,
  ProtocolError,
  isChannelProtocolEvent,
  isParticipant,
  isTerminalChannelState,
  repr,
  type Envelope,
} from '@ag2net/protocol';
import type { ChannelRuntime } from './channel-runtime.js';
import type { HubContext } from './context.js';
import { matchesAny } from './glob.js';
import { ackOf, activateLocked, appendLocked, beginCloseLocked } from './lifecycle.js';

/** The reply to an admitted post. */
export interface PostAck {
  readonly envelope_id: string;
  readonly sequence: number;
  readonly created_at: string;
}

/**
 * Admits a client's envelope, in AG2's order with ag2net's fixes: the sender is the caller; the sender is
 * registered; the sender's outbound rule allows the audience; the channel exists and takes the event in its state;
 * the sender is a participant; the adapter accepts it. Then: stamp, append to the WAL (exactly once), fold, and act
 * on the adapter's verdict. A retried post (same envelope id) gets the original ack and is not admitted again.
 */
export async function postEnvelope(ctx: HubContext, callerId: string, envelope: Envelope): Promise<PostAck> {
  if (envelope.sender_id !== callerId) {
    throw new AuthError(`sender_id ${repr(envelope.sender_id)} does not match the caller ${repr(callerId)}`);
  }
  const sender = ctx.registry.get(envelope.sender_id);
  if (sender === undefined) throw new NotFoundError(`sender not registered: ${envelope.sender_id}`);
  checkEventData(envelope);
  checkOutbound(ctx, envelope);
  const rt = ctx.channels.require(envelope.channel_id);
  return ctx.serial.run(envelope.channel_id, () => admitLocked(ctx, rt, envelope));
}

async function admitLocked(ctx: HubContext, rt: ChannelRuntime, envelope: Envelope): Promise<PostAck> {
  const previous = envelope.envelope_id === '' ? undefined : rt.envelopeIds.get(envelope.envelope_id);
  if (previous !== undefined) return ackOf(envelope.envelope_id, previous);
  checkChannelAccepts(rt, envelope);
  const { adapter, state, metadata } = rt;
  if (adapter === null || state === null) {
    throw new ProtocolError(
      `channel ${repr(metadata.channel_id)} has no registered adapter (manifest ${repr(metadata.manifest.type)}@v${metadata.manifest.version})`,
    );
  }
  const handshake = envelope.event_type === EV_CHANNEL_INVITE_ACK || envelope.event_type === EV_CHANNEL_INVITE_REJECT;
  if (!handshake) adapter.validateSend(metadata, envelope, state);
  const admitted = await appendLocked(ctx, rt, { ...envelope, sequence: undefined });
  const ack = { envelope_id: admitted.envelope_id, sequence: admitted.sequence ?? 0, created_at: admitted.created_at };
  if (handshake) {
    await onHandshakeReply(ctx, rt, admitted);
    return ack;
  }
  if (rt.state !== null) {
    const verdict = adapter.onAccepted(rt.metadata, admitted, rt.state);
    if (verdict.nextState === ChannelState.Closing || verdict.nextState === ChannelState.Closed) {
      await beginCloseLocked(ctx, rt, verdict.autoCloseReason || 'closed_by_adapter');
    }
  }
  return ack;
}

/** Built-in event types must carry their `event_data` shape; custom types pass untouched. */
function checkEventData(envelope: Envelope): void {
  const schema = EVENT_DATA_SCHEMAS[envelope.event_type];
  if (schema === undefined) return;
  const parsed = schema.safeParse(envelope.event_data);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new InvalidRequestError(`event_data of ${envelope.event_type} is invalid: ${issues}`);
  }
}

/** AG2's outbound gate, before the channel lookup: explicit recipients must match the sender's `outbound_to`. */
function checkOutbound(ctx: HubContext, envelope: Envelope): void {
  const sender = ctx.registry.require(envelope.sender_id);
  const { outbound_to: outbound } = sender.rule.access;
  for (const rid of envelope.audience ?? []) {
    if (rid === envelope.sender_id) continue;
    const recipient = ctx.registry.get(rid);
    if (recipient === undefined) continue;
    if (!matchesAny(recipient.passport.name, outbound)) {
      throw new AccessDeniedError(
        `sender ${repr(sender.passport.name)} not permitted to send to ${repr(recipient.passport.name)}`,
      );
    }
  }
  const cap = sender.rule.limits.delegation_depth;
  if (cap > 0 && envelope.depth > cap) {
    throw new AccessDeniedError(
      `sender ${repr(sender.passport.name)} exceeded delegation_depth (${envelope.depth} > ${cap})`,
    );
  }
}

/** State, protocol-event and membership checks that AG2 lacks (sender authenticity, participants only). */
function checkChannelAccepts(rt: ChannelRuntime, envelope: Envelope): void {
  const { metadata } = rt;
  const cid = repr(metadata.channel_id);
  if (isTerminalChannelState(metadata.state)) throw new ProtocolError(`channel ${cid} is ${metadata.state}`);
  const type = envelope.event_type;
  if (type === EV_CHANNEL_INVITE_ACK || type === EV_CHANNEL_INVITE_REJECT) {
    if (metadata.state !== ChannelState.Pending) {
      throw new ProtocolError(`channel ${cid} is not awaiting invite replies (state=${metadata.state})`);
    }
    if (!metadata.pending_acks.includes(envelope.sender_id)) {
      throw new ProtocolError(`channel ${cid} has no pending invite for ${repr(envelope.sender_id)}`);
    }
    return;
  }
  if (isChannelProtocolEvent(type)) throw new ProtocolError(`${type} events are written by the hub`);
  if (metadata.state !== ChannelState.Active) {
    throw new ProtocolError(`channel ${cid} not active (state=${metadata.state})`);
  }
  if (!isParticipant(metadata, envelope.sender_id)) {
    throw new ProtocolError(`channel ${cid} only accepts envelopes from participants, got ${repr(envelope.sender_id)}`);
  }
  for (const member of envelope.audience ?? []) {
    if (!isParticipant(metadata, member)) {
      throw new ProtocolError(`audience member ${repr(member)} is not a participant of channel ${cid}`);
    }
  }
}

/** An invitee answered: record it; open the channel when nobody is pending, close it on a reject. Locked. */
async function onHandshakeReply(ctx: HubContext, rt: ChannelRuntime, reply: Envelope): Promise<void> {
  const rejected = reply.event_type === EV_CHANNEL_INVITE_REJECT;
  rt.metadata = {
    ...rt.metadata,
    pending_acks: rt.metadata.pending_acks.filter((id) => id !== reply.sender_id),
    rejected_by: rejected ? [...rt.metadata.rejected_by, reply.sender_id] : rt.metadata.rejected_by,
  };
  await ctx.channels.persist(rt.metadata);
  if (rejected) await beginCloseLocked(ctx, rt, 'invite_rejected');
  else if (rt.metadata.pending_acks.length === 0 && rt.metadata.rejected_by.length === 0) await activateLocked(ctx, rt);
}
