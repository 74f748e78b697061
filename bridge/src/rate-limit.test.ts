import { describe, expect, it } from 'vitest';
import { RateLimiter } from './rate-limit.js';

describe('rate limiter', () => {
  it('admits a burst, refuses the next, and refills at the rate per key', () => {
    const limiter = new RateLimiter({ perMinute: 60, burst: 3 });
    expect([1, 2, 3, 4].map(() => limiter.take('a', 0))).toEqual([true, true, true, false]);
    expect(limiter.take('b', 0)).toBe(true);
    expect(limiter.take('a', 999)).toBe(false);
    expect(limiter.take('a', 1000)).toBe(true);
    expect(limiter.take('a', 1000)).toBe(false);
  });
});
