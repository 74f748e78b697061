import { setTimeout as sleep } from 'node:timers/promises';

/** Options of `waitFor`. */
export interface WaitOptions {
  /** Give up after this many ms; default 5000. */
  readonly timeoutMs?: number;
  /** Poll interval in ms; default 10. */
  readonly intervalMs?: number;
  /** Said in the timeout error. */
  readonly what?: string;
}

/**
 * Polls `probe` until it returns a value other than `undefined`/`false`, and returns it. For conditions driven by
 * other processes (a consumer caught up, a standby took over); never a substitute for an injectable clock.
 */
export async function waitFor<T>(
  probe: () => T | Promise<T>,
  options: WaitOptions = {},
): Promise<Exclude<T, false | undefined>> {
  const deadline = Date.now() + (options.timeoutMs ?? 5000);
  let last: unknown = undefined;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value as Exclude<T, false | undefined>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${options.what ?? 'condition'}`, { cause: last });
    }
    await sleep(options.intervalMs ?? 10);
  }
}

/**
 * Settles as `promise` does, or rejects after `timeoutMs` naming `what`: a bound for a wait that is not a poll (a
 * watch, an event, a read that could stall), so that no test waits forever.
 */
export async function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}
