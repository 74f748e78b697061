import type { Envelope } from '@ag2net/protocol';
import { pause } from '@ag2net/protocol/internal';

/** How often `--follow` asks the hub for what is new, in ms. */
export const FOLLOW_POLL_MS = 500;

/** What `followLog` reads a channel's log with: a participant, as itself. */
export interface LogReader {
  readWal(channelId: string, range: { since?: number }): Promise<Envelope[]>;
}

/**
 * The envelopes of a channel's log from sequence `since` on, in order, as the reader may see them: read every
 * `pollMs` until `signal` aborts. A person's log is theirs alone to read, whereas the deliveries of their inbox go to
 * whichever of their connections takes them first (the console's, when they are signed in there too).
 */
export async function* followLog(
  reader: LogReader,
  channelId: string,
  options: { readonly since: number; readonly pollMs: number; readonly signal: AbortSignal },
): AsyncGenerator<Envelope> {
  let since = options.since;
  while (!options.signal.aborted) {
    for (const e of await reader.readWal(channelId, { since })) {
      if (options.signal.aborted) return;
      since = Math.max(since, (e.sequence ?? 0) + 1);
      yield e;
    }
    if (!(await pause(options.pollMs, options.signal))) return;
  }
}
