/** The hub's source of time, injectable so tests step time instead of sleeping. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** The system clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** The last timestamp `isoAt` made, and its ms: envelopes admitted in the same millisecond share it. */
let lastMs = Number.NaN;
let lastIso = '';

/** An ISO-8601 UTC timestamp of `ms`. */
export function isoAt(ms: number): string {
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}
