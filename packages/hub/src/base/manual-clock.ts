import type { Clock } from './clock.js';

/** A clock that moves only when told: tests step time instead of sleeping. */
export interface ManualClock extends Clock {
  /** Moves time forward by `ms`. */
  advance(ms: number): void;
  /** Sets the time. */
  set(ms: number): void;
}

/** A manual clock starting at `startMs` (ms since the epoch). */
export function createManualClock(startMs: number): ManualClock {
  let now = startMs;
  return {
    now: () => now,
    advance: (ms) => {
      now += ms;
    },
    set: (ms) => {
      now = ms;
    },
  };
}
