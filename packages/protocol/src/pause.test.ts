import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { pause } from './pause.js';

describe('pause', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('resolves true once the time passed, not before', async () => {
    let passed: boolean | undefined;
    void pause(1000, new AbortController().signal).then((p) => (passed = p));
    await vi.advanceTimersByTimeAsync(999);
    expect(passed).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(passed).toBe(true);
  });

  it('resolves false at once when the signal aborts, and leaves no timer behind', async () => {
    const abort = new AbortController();
    const waiting = pause(60_000, abort.signal);
    abort.abort();
    await expect(waiting).resolves.toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('resolves false for a signal that aborted already', async () => {
    await expect(pause(1000, AbortSignal.abort())).resolves.toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });
});
