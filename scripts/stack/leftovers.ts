import { ChannelState } from '@ag2net/protocol';
import { connectPerson, type DemoAuth } from './demo.js';

/** The close reason of a channel an earlier demo run left open. */
export const LEFTOVER_CLOSE_REASON = 'demo_restart';

/**
 * Closes the channels the demo's person (`you`) left open in an earlier run that did not finish (a crash, Ctrl-C,
 * a failed model): the runner would otherwise answer their pending turns at start (`resumePendingTurns`) with the
 * demo's scripted steps, and this run's questions would get none. Runs before the runner starts; resolves with
 * how many it closed. The hub must be up (it is retried for `retryForMs`). It acts as the person, and registers it
 * on the first run (the demo attaches to it then).
 */
export async function closeLeftoverChannels(options: {
  readonly natsUrl: string;
  readonly prefix: string;
  readonly retryForMs: number;
  readonly auth: DemoAuth | null;
}): Promise<number> {
  const { hub, you } = await connectPerson(options);
  await using _hub = hub;
  let closed = 0;
  for (const state of [ChannelState.Pending, ChannelState.Active]) {
    for (const channel of await you.listChannels({ agent_id: you.agentId, state })) {
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
