import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TurnLease, TurnLockLostError } from './turn-lease.js';

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

const never = (): Promise<boolean> => new Promise<boolean>(() => undefined);

describe('TurnLease', () => {
  it('renews every third of the TTL and keeps the turn while renewals succeed', async () => {
    let renewals = 0;
    const lease = new TurnLease({ ttlMs: 3000, acquiredAt: 0, renew: () => Promise.resolve(++renewals > 0) });
    await vi.advanceTimersByTimeAsync(10_000);
    expect([renewals, lease.signal.aborted]).toEqual([10, false]);
    lease.stop();
  });

  it('aborts with TurnLockLostError at the first renewal that reports the lock lost', async () => {
    const lease = new TurnLease({ ttlMs: 3000, acquiredAt: 0, renew: () => Promise.resolve(false) });
    await vi.advanceTimersByTimeAsync(999);
    expect(lease.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(lease.signal.reason).toEqual(new TurnLockLostError('turn lock taken by another replica or lapsed'));
  });

  it('aborts exactly one TTL after the last successful renewal was sent when renewals stop answering', async () => {
    let answer = true;
    const errors: unknown[] = [];
    const lease = new TurnLease({
      ttlMs: 3000,
      acquiredAt: 0,
      renew: () => (answer ? Promise.resolve(true) : never()),
      onRenewError: (err) => errors.push(err),
    });
    await vi.advanceTimersByTimeAsync(1000); // renewal sent at 1000 succeeds: held until 4000 at least
    answer = false;
    await vi.advanceTimersByTimeAsync(2999);
    expect(lease.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(Date.now()).toBe(4000);
    expect(lease.signal.reason).toEqual(new TurnLockLostError('turn lock not renewed within 3000 ms'));
    expect(errors).toEqual([]);
  });

  it('keeps trying after a renewal that failed without an answer, and stops renewing once stopped', async () => {
    let calls = 0;
    const errors: unknown[] = [];
    const stop = new AbortController();
    const lease = new TurnLease({
      ttlMs: 3000,
      acquiredAt: 0,
      stop: stop.signal,
      renew: () => (++calls === 1 ? Promise.reject(new Error('timeout')) : Promise.resolve(true)),
      onRenewError: (err) => errors.push(err),
    });
    await vi.advanceTimersByTimeAsync(5000);
    expect([calls, lease.signal.aborted, errors]).toEqual([5, false, [new Error('timeout')]]);
    stop.abort();
    await vi.advanceTimersByTimeAsync(10_000);
    expect([calls, lease.signal.aborted]).toEqual([5, false]);
  });

  it('stopping the lease ends a renewal still waiting for the hub, and does not report it as failed', async () => {
    const signals: AbortSignal[] = [];
    const errors: unknown[] = [];
    const lease = new TurnLease({
      ttlMs: 3000,
      acquiredAt: 0,
      renew: (signal) => {
        signals.push(signal);
        return new Promise<boolean>((_resolve, reject) =>
          signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }),
        );
      },
      onRenewError: (err) => errors.push(err),
    });
    await vi.advanceTimersByTimeAsync(1500); // the renewal sent at 1000 is still waiting
    expect(signals.map((s) => s.aborted)).toEqual([false]);
    lease.stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect([signals.length, signals[0]?.aborted, errors, lease.signal.aborted]).toEqual([1, true, [], false]);
  });
});
