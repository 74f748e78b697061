import {
  EV_PACKET,
  EV_TEXT,
  ParticipantRole,
  ProtocolError,
  TextDataSchema,
  createEnvelope,
  type ChannelMetadata,
  type Envelope,
  type Rendered,
} from '@ag2net/protocol';
import type { PacketOptions, RoundInput, TextOptions } from './types.js';

/**
 * AG2's default: an `EV_TEXT`'s `parts` when it has them (text and data), else its `text`; `null` for any other event
 * and for a text envelope without text.
 */
export function defaultRenderEnvelope(envelope: Envelope): Rendered | null {
  if (envelope.event_type !== EV_TEXT) return null;
  const data = TextDataSchema.safeParse(envelope.event_data);
  if (!data.success) return null;
  return data.data.parts ?? data.data.text;
}

/** AG2's default: the same as `defaultRenderEnvelope`. */
export function defaultExtractTurnInput(envelope: Envelope): Rendered | null {
  return defaultRenderEnvelope(envelope);
}

/** An `EV_TEXT` envelope `{ "text": options.text }`. */
export function defaultBuildTextEnvelope(channelId: string, senderId: string, options: TextOptions): Envelope {
  return createEnvelope({
    channel_id: channelId,
    sender_id: senderId,
    event_type: EV_TEXT,
    event_data: { text: options.text },
    audience: options.audience ? [...options.audience] : null,
    causation_id: options.causationId ?? null,
  });
}

/**
 * An `EV_PACKET` envelope with `body`, a `routing` for a handoff, and `context_updates` for context changes.
 * AG2 wrote context changes to `event_data.context`, which its fold never read; this writes `context_updates`.
 */
export function defaultBuildPacketEnvelope(channelId: string, senderId: string, options: PacketOptions): Envelope {
  const data: Record<string, unknown> = { body: options.body };
  if (options.handoff) {
    const routing: Record<string, unknown> = {
      kind: 'handoff',
      target: options.handoff.target,
    };
    if (options.handoff.reason) routing['reason'] = options.handoff.reason;
    data['routing'] = routing;
  }
  const set = options.contextSet ?? {};
  const del = options.contextDelete ?? [];
  if (Object.keys(set).length > 0 || del.length > 0) {
    data['context_updates'] = { set: { ...set }, delete: [...del] };
  }
  return createEnvelope({
    channel_id: channelId,
    sender_id: senderId,
    event_type: EV_PACKET,
    event_data: data,
    audience: options.audience ? [...options.audience] : null,
    causation_id: options.causationId ?? null,
  });
}

/** AG2's default round envelope: the reply body as a broadcast `EV_TEXT`, or `null` when the body is empty. */
export function defaultBuildRoundEnvelope(input: RoundInput): Envelope | null {
  if (input.reply.body === '') return null;
  return defaultBuildTextEnvelope(input.metadata.channel_id, input.senderId, { text: input.reply.body });
}

/**
 * The three checks of a two-party protocol, in AG2's order: one initiator, one respondent, exactly two
 * participants. `kind` names the protocol in the messages.
 */
export function validateTwoParty(kind: string, metadata: ChannelMetadata): void {
  const roles = metadata.participants.map((p) => p.role);
  if (!roles.includes(ParticipantRole.Initiator)) {
    throw new ProtocolError(`${kind} requires exactly one initiator`);
  }
  if (!roles.includes(ParticipantRole.Respondent)) {
    throw new ProtocolError(`${kind} requires exactly one respondent`);
  }
  const n = metadata.participants.length;
  if (n !== 2) throw new ProtocolError(`${kind} requires exactly 2 participants, got ${n}`);
}

/** The participant ids in turn order (by `Participant.order`). */
export function orderedParticipants(metadata: ChannelMetadata): string[] {
  return [...metadata.participants].sort((a, b) => a.order - b.order).map((p) => p.agent_id);
}
