import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConsumeWatchdog } from '../src/operations/consume-watchdog.js';

const STALL_MS = 10_000;
const CHECK_MS = 1_000;

/** What the watchdog saw and did, and what the fake consumer answers. */
interface State {
  /** Every `onStall` call, as `[silentMs, pending]`. */
  readonly stalls: [number, number][];
  /** How often the consumer was asked for its pending count. */
  asked: number;
  pending: number;
  waiting: boolean;
  /** When set, asking the consumer fails (an election under way). */
  unreachable: boolean;
}

interface Harness extends State {
  readonly watchdog: ConsumeWatchdog;
}

function harness(): Harness {
  const state: State = { stalls: [], asked: 0, pending: 0, waiting: true, unreachable: false };
  const watchdog = new ConsumeWatchdog({
    stallMs: STALL_MS,
    checkMs: CHECK_MS,
    now: () => Date.now(),
    waiting: () => state.waiting,
    pending: () => {
      state.asked += 1;
      return state.unreachable ? Promise.reject(new Error('timeout')) : Promise.resolve(state.pending);
    },
    onStall: (silentMs, pending) => state.stalls.push([silentMs, pending]),
  });
  return Object.assign(state, { watchdog });
}

describe('the consume watchdog', () => {
  let h: Harness | null = null;
  beforeEach(() => vi.useFakeTimers({ now: 0 }));
  afterEach(() => {
    h?.watchdog.stop();
    h = null;
    vi.useRealTimers();
  });

  it('reports a consume silent past the stall time while the consumer holds pending messages, once', async () => {
    h = harness();
    h.pending = 200;
    await vi.advanceTimersByTimeAsync(STALL_MS - CHECK_MS);
    expect({ stalls: h.stalls, asked: h.asked }).toEqual({ stalls: [], asked: 0 });
    await vi.advanceTimersByTimeAsync(CHECK_MS);
    expect(h.stalls).toEqual([[STALL_MS, 200]]);
    await vi.advanceTimersByTimeAsync(5 * STALL_MS);
    expect(h.stalls).toEqual([[STALL_MS, 200]]);
  });

  it('does not report a consume that gets heartbeats or messages', async () => {
    h = harness();
    h.pending = 200;
    for (let i = 0; i < 30; i += 1) {
      await vi.advanceTimersByTimeAsync(STALL_MS / 2);
      h.watchdog.activity();
    }
    expect({ stalls: h.stalls, asked: h.asked }).toEqual({ stalls: [], asked: 0 });
  });

  it('does not report silence when the consumer holds nothing, but does once messages wait', async () => {
    h = harness();
    await vi.advanceTimersByTimeAsync(3 * STALL_MS);
    expect(h.stalls).toEqual([]);
    expect(h.asked).toBe(3);
    h.pending = 3;
    await vi.advanceTimersByTimeAsync(STALL_MS);
    expect(h.stalls).toEqual([[STALL_MS, 3]]);
  });

  it('does not count silence while the reader is busy and not reading', async () => {
    h = harness();
    h.pending = 200;
    h.waiting = false;
    await vi.advanceTimersByTimeAsync(5 * STALL_MS);
    expect({ stalls: h.stalls, asked: h.asked }).toEqual({ stalls: [], asked: 0 });
    h.waiting = true;
    await vi.advanceTimersByTimeAsync(STALL_MS);
    expect(h.stalls).toEqual([[STALL_MS, 200]]);
  });

  it('asks again at the next check when the consumer cannot be reached', async () => {
    h = harness();
    h.pending = 7;
    h.unreachable = true;
    await vi.advanceTimersByTimeAsync(STALL_MS + 2 * CHECK_MS);
    expect({ stalls: h.stalls, asked: h.asked }).toEqual({ stalls: [], asked: 3 });
    h.unreachable = false;
    await vi.advanceTimersByTimeAsync(CHECK_MS);
    expect(h.stalls).toEqual([[STALL_MS + 3 * CHECK_MS, 7]]);
  });

  it('reports nothing after stop', async () => {
    h = harness();
    h.pending = 200;
    h.watchdog.stop();
    await vi.advanceTimersByTimeAsync(3 * STALL_MS);
    expect({ stalls: h.stalls, asked: h.asked }).toEqual({ stalls: [], asked: 0 });
  });
});
