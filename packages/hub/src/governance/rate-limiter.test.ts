import { describe, expect, it } from 'vitest';
import { RateLimiter } from './rate-limiter.js';

describe('RateLimiter', () => {
  it('admits a full burst, then says how long until the next token', () => {
    const limiter = new RateLimiter();
    const rate = { per_minute: 6, burst: 2 };
    expect([limiter.take('a', rate, 0), limiter.take('a', rate, 0)]).toEqual([{ ok: true }, { ok: true }]);
    expect(limiter.take('a', rate, 0)).toEqual({ ok: false, retryAfterMs: 10_000 });
    expect(limiter.take('a', rate, 4_000)).toEqual({ ok: false, retryAfterMs: 6_000 });
    expect(limiter.take('a', rate, 10_000)).toEqual({ ok: true });
  });

  it('holds per_minute tokens when burst is 0, and no limit when per_minute is 0', () => {
    const limiter = new RateLimiter();
    const rate = { per_minute: 3, burst: 0 };
    for (let i = 0; i < 3; i += 1) expect(limiter.take('a', rate, 0)).toEqual({ ok: true });
    expect(limiter.take('a', rate, 0).ok).toBe(false);
    for (let i = 0; i < 100; i += 1) expect(limiter.take('b', { per_minute: 0, burst: 5 }, 0)).toEqual({ ok: true });
  });

  it('never refills past the capacity, and a smaller new capacity applies at once', () => {
    const limiter = new RateLimiter();
    limiter.take('a', { per_minute: 60, burst: 5 }, 0);
    expect(limiter.take('a', { per_minute: 60, burst: 1 }, 3_600_000)).toEqual({ ok: true });
    expect(limiter.take('a', { per_minute: 60, burst: 1 }, 3_600_000).ok).toBe(false);
  });

  it('gives back a refunded token and keeps buckets apart per agent', () => {
    const limiter = new RateLimiter();
    const rate = { per_minute: 1, burst: 1 };
    expect(limiter.take('a', rate, 0).ok).toBe(true);
    limiter.refund('a', rate);
    expect(limiter.take('a', rate, 0).ok).toBe(true);
    expect(limiter.take('b', rate, 0).ok).toBe(true);
    expect(limiter.take('a', rate, 0).ok).toBe(false);
  });
});
