import { describe, expect, it, vi } from 'vitest';
import { backoffMs, keepLease, type RenewableLease } from './lease-keeper.js';

type Result = 'renewed' | 'lost' | 'unknown';

/** A lease that answers renewals from a script; `onRenew` runs at each call (its index given). */
function scripted(results: readonly Result[], onRenew: (call: number) => void = () => undefined) {
  let calls = 0;
  let valid = true;
  let renewable = true;
  const lease: RenewableLease & { calls: () => number; expire: () => void; lapse: () => void } = {
    renew: () => {
      onRenew(calls);
      const result = results[Math.min(calls, results.length - 1)] ?? 'renewed';
      calls += 1;
      // A renewal that succeeds while the key can still be renewed makes the lease valid again.
      if (result === 'renewed' && renewable) valid = true;
      return Promise.resolve(result);
    },
    holds: () => valid,
    renewable: () => renewable,
    calls: () => calls,
    expire: () => {
      valid = false;
      renewable = false;
    },
    lapse: () => {
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

  it('a lapse that a renewal ends keeps the term: renewed at once, then every quarter period until one succeeds', async () => {
    vi.useFakeTimers();
    try {
      const abort = new AbortController();
      const at: number[] = [];
      const seen: boolean[] = [];
      const start = Date.now();
      // The lease lapses 150 ms in (a server restart), two renewals get no answer, the third succeeds.
      setTimeout(() => lease.lapse(), 150);
      const lease = scripted(['unknown', 'unknown', 'renewed', 'renewed'], (call) => {
        at.push(Date.now() - start);
        seen.push(lease.holds());
        if (call === 3) abort.abort();
      });
      const lapses: boolean[] = [];
      const kept = keepLease(lease, {
        renewMs: 400,
        checkMs: 10,
        signal: abort.signal,
        onLapse: (lapsed) => lapses.push(lapsed),
      });
      await vi.advanceTimersByTimeAsync(2_000);
      expect(await kept).toBe('stopped');
      // Lapse seen at the 150 ms check: renewed at once, then 100 ms (400 / 4) apart; once valid, a full period.
      expect(at).toEqual([150, 250, 350, 750]);
      expect(seen).toEqual([false, false, false, true]);
      expect(lapses).toEqual([true, false]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a lapse that lasts until the key may have expired ends the term', async () => {
    const abort = new AbortController();
    const lease = scripted(['unknown']);
    lease.lapse();
    lease.renew = () => {
      lease.expire();
      return Promise.resolve('unknown');
    };
    const lapses: boolean[] = [];
    const kept = keepLease(lease, { renewMs: 2, checkMs: 1, signal: abort.signal, onLapse: (l) => lapses.push(l) });
    expect(await kept).toBe('lost');
    expect(lapses).toEqual([true]);
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
