import { describe, expect, it, vi } from 'vitest';
import { backoffMs, keepLease, type RenewableLease } from './lease-keeper.js';

type Result = 'renewed' | 'lost' | 'unknown';

/** A lease that answers renewals from a script; `onRenew` runs at each call (its index given). */
function scripted(results: readonly Result[], onRenew: (call: number) => void = () => undefined) {
  let calls = 0;
  let valid = true;
  const lease: RenewableLease & { calls: () => number; expire: () => void } = {
    renew: () => {
      onRenew(calls);
      const result = results[Math.min(calls, results.length - 1)] ?? 'renewed';
      calls += 1;
      return Promise.resolve(result);
    },
    holds: () => valid,
    calls: () => calls,
    expire: () => {
      valid = false;
    },
  };
  return lease;
}

describe('keepLease', () => {
  it('failed renewals alone never end a term while the lease still holds; an abort does', async () => {
    const abort = new AbortController();
    const lease = scripted(['unknown', 'unknown', 'renewed', 'unknown'], (call) => {
      if (call === 4) abort.abort();
    });
    expect(await keepLease(lease, { renewMs: 2, checkMs: 1, signal: abort.signal })).toBe('stopped');
    expect(lease.calls()).toBe(5);
  });

  it('sends a renewal that got no answer again a quarter period later, then keeps the full period', async () => {
    vi.useFakeTimers();
    try {
      const abort = new AbortController();
      const at: number[] = [];
      const start = Date.now();
      const lease = scripted(['unknown', 'renewed', 'renewed'], (call) => {
        at.push(Date.now() - start);
        if (call === 2) abort.abort();
      });
      const kept = keepLease(lease, { renewMs: 400, checkMs: 10, signal: abort.signal });
      await vi.advanceTimersByTimeAsync(2_000);
      expect(await kept).toBe('stopped');
      // First renewal one period in; the unanswered one is retried 100 ms (400 / 4) later; then a full period.
      expect(at).toEqual([400, 500, 900]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a renewal that says lost ends the term', async () => {
    const abort = new AbortController();
    const lease = scripted(['renewed', 'lost']);
    expect(await keepLease(lease, { renewMs: 2, checkMs: 1, signal: abort.signal })).toBe('lost');
    expect(lease.calls()).toBe(2);
  });

  it('a lease that lapses by its own clock ends the term, even while renewals hang', async () => {
    const abort = new AbortController();
    const lease = scripted(['renewed']);
    lease.renew = () => {
      lease.expire();
      return new Promise(() => undefined);
    };
    expect(await keepLease(lease, { renewMs: 2, checkMs: 1, signal: abort.signal })).toBe('lost');
  });

  it('a renewal that answers lost after its term was aborted changes nothing', async () => {
    const abort = new AbortController();
    let answer: (r: Result) => void = () => undefined;
    const lease = scripted(['renewed']);
    lease.renew = () => {
      abort.abort();
      return new Promise<Result>((resolve) => (answer = resolve));
    };
    expect(await keepLease(lease, { renewMs: 2, checkMs: 1, signal: abort.signal })).toBe('stopped');
    answer('lost');
    await Promise.resolve();
  });
});

describe('backoffMs', () => {
  it('doubles per failure up to the cap, jittered into [half, full]', () => {
    for (let i = 0; i < 50; i += 1) {
      const first = backoffMs(0, 100, 5_000);
      expect(first).toBeGreaterThanOrEqual(50);
      expect(first).toBeLessThanOrEqual(100);
      const capped = backoffMs(30, 100, 5_000);
      expect(capped).toBeGreaterThanOrEqual(2_500);
      expect(capped).toBeLessThanOrEqual(5_000);
    }
  });
});
