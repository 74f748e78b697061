import { HubClient } from '@ag2net/client';
import { ChannelState } from '@ag2net/protocol';

/** The close reason of a channel an earlier demo run left open. */
export const LEFTOVER_CLOSE_REASON = 'demo_restart';

/**
 * Closes the channels the demo's person (`you`) left open in an earlier run that did not finish (a crash, Ctrl-C,
 * a failed model): the runner would otherwise answer their pending turns at start (`resumePendingTurns`) with the
 * demo's scripted steps, and this run's questions would get none. Runs before the runner starts; resolves with
 * how many it closed. The hub must be up (it is retried for `retryForMs`).
 */
export async function closeLeftoverChannels(options: {
  readonly natsUrl: string;
  readonly prefix: string;
  readonly retryForMs: number;
}): Promise<number> {
  await using hub = await HubClient.connect({
    servers: options.natsUrl,
    prefix: options.prefix,
    retryForMs: options.retryForMs,
  });
  const youId = await hub.findAgentId('you');
  if (youId === null) return 0;
  const you = await hub.attachHuman('you');
  let closed = 0;
  for (const state of [ChannelState.Pending, ChannelState.Active]) {
    for (const channel of await hub.listChannels({ agent_id: youId, state })) {
      // A pending channel the hub will not close yet ends by itself when its invites time out.
      const done = await you.closeChannel(channel.channel_id, LEFTOVER_CLOSE_REASON).then(
        () => true,
        () => false,
      );
      if (done) closed += 1;
    }
  }
  return closed;
}
