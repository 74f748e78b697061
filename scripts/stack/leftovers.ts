import { connectPerson, type DemoAuth } from './demo.js';
import { closeOpenChannels } from './open-channels.js';

/**
 * Closes the channels the demo's person (`you`) left open in an earlier run that did not finish (a crash, Ctrl-C,
 * a failed model): the runner would otherwise answer their pending turns at start (`resumePendingTurns`) with the
 * demo's scripted steps, and this run's questions would get none. Runs before the runner starts; resolves with
 * how many it closed. The hub must be up (it is retried for `retryForMs`). It acts as the person, and registers it
 * on the first run (the demo attaches to it then); when the person is moved to the bridge's key, the channels the
 * identity of the old key left open count too.
 */
export async function closeLeftoverChannels(options: {
  readonly natsUrl: string;
  readonly prefix: string;
  readonly retryForMs: number;
  readonly auth: DemoAuth | null;
}): Promise<number> {
  const { hub, you, closedOnReplace } = await connectPerson(options);
  await using _hub = hub;
  return closedOnReplace + (await closeOpenChannels(you));
}
