import type { HumanClient } from '@ag2net/client';
import { ChannelState } from '@ag2net/protocol';

/** The close reason of a channel an earlier demo run left open. */
export const LEFTOVER_CLOSE_REASON = 'demo_restart';

/**
 * Closes the person's pending and active channels with `LEFTOVER_CLOSE_REASON`; resolves with how many it closed. A
 * pending channel the hub will not close yet is skipped: it ends by itself when its invites time out.
 */
export async function closeOpenChannels(you: HumanClient): Promise<number> {
  let closed = 0;
  for (const state of [ChannelState.Pending, ChannelState.Active]) {
    for (const channel of await you.listChannels({ agent_id: you.agentId, state })) {
      const done = await you.closeChannel(channel.channel_id, LEFTOVER_CLOSE_REASON).then(
        () => true,
        () => false,
      );
      if (done) closed += 1;
    }
  }
  return closed;
}
