import type { HubRpc } from '@ag2net/client';
import { EV_CHANNEL_INVITE_ACK, type Envelope } from '@ag2net/protocol';

/** Accepts `invite` as the invitee `inviteeId`, over raw RPC (the tests that need no participant client). */
export async function ackInviteAs(rpc: HubRpc, invite: Envelope, inviteeId: string): Promise<void> {
  await rpc.call(
    'post',
    {
      channel_id: invite.channel_id,
      sender_id: inviteeId,
      event_type: EV_CHANNEL_INVITE_ACK,
      event_data: { channel_id: invite.channel_id },
      causation_id: invite.envelope_id,
    },
    { caller: inviteeId },
  );
}
