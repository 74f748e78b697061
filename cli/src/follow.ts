import { setTimeout as sleep } from 'node:timers/promises';

/** How often `--follow` asks the hub for what is new, in ms. */
export const FOLLOW_POLL_MS = 500;

/** Resolves after `ms`, or at once (false) when `signal` aborts; true when the time passed. */
export async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}
