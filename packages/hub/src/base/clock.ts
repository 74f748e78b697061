/** The hub's source of time, injectable so tests step time instead of sleeping. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** The system clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** An ISO-8601 UTC timestamp of `ms`. */
export function isoAt(ms: number): string {
  return new Date(ms).toISOString();
}
