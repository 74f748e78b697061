import { EV_CHANNEL_INVITE, EV_CHANNEL_INVITE_ACK, type Envelope } from '@ag2net/protocol';
import type { Poster } from './contracts.js';

/** True for an invite addressed to `participant` by someone else. */
export function isInviteFor(participant: Poster, envelope: Envelope): boolean {
  return envelope.event_type === EV_CHANNEL_INVITE && envelope.sender_id !== participant.agentId;
}

/** Accepts an invite: posts `ag2.channel.invite.ack` answering it. */
export async function ackInvite(participant: Poster, invite: Envelope): Promise<void> {
  await participant.sendEnvelope({
    channel_id: invite.channel_id,
    event_type: EV_CHANNEL_INVITE_ACK,
    event_data: { channel_id: invite.channel_id },
    causation_id: invite.envelope_id,
  });
}
