import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { holdingsOf, partitionRanges, watchHoldings } from './holdings.js';

type Held = { partition: number; epoch: number }[];

/** A hub whose holdings the test sets, and the log lines the watch writes about it. */
function watched(partitions: number, held: Held) {
  const hub = { hubId: 'hub-1', held, health: () => ({ partitions, held: hub.held }) };
  const lines: [Record<string, unknown>, string][] = [];
  const log = { info: (fields: Record<string, unknown>, msg: string) => void lines.push([fields, msg]) };
  // A long interval: the test looks by advancing the fake timers, never by waiting.
  const watch = watchHoldings({ hub, log, everyMs: 1000 });
  return { hub, lines, watch };
}

describe('partitionRanges', () => {
  it('writes runs of consecutive partitions as ranges, in order', () => {
    expect(partitionRanges([0, 1, 2, 3, 6])).toBe('0-3, 6');
    expect(partitionRanges([7, 5, 4])).toBe('4-5, 7');
    expect(partitionRanges([0])).toBe('0');
    expect(partitionRanges([1, 3, 5])).toBe('1, 3, 5');
    expect(partitionRanges([])).toBe('none');
  });
});

describe('holdingsOf', () => {
  it('lists the held partitions in order with the epoch of each, and the count', () => {
    expect(
      holdingsOf({
        partitions: 8,
        held: [
          { partition: 6, epoch: 2 },
          { partition: 0, epoch: 5 },
        ],
      }),
    ).toEqual({ partitions: [0, 6], epochs: [5, 2], of: 8 });
  });
});

describe('watchHoldings', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('logs serving with the partitions once it holds some, after every change, and when it holds none any more', () => {
    const { hub, lines, watch } = watched(8, []);
    expect(lines).toEqual([]);
    hub.held = [{ partition: 2, epoch: 1 }];
    vi.advanceTimersByTime(1000);
    hub.held = [
      { partition: 2, epoch: 1 },
      { partition: 5, epoch: 3 },
    ];
    vi.advanceTimersByTime(1000);
    vi.advanceTimersByTime(1000); // no change, no line
    hub.held = [];
    vi.advanceTimersByTime(1000);
    watch.stop();
    hub.held = [{ partition: 0, epoch: 9 }];
    vi.advanceTimersByTime(5000);
    expect(lines).toEqual([
      [{ hubId: 'hub-1', partitions: [2], epochs: [1], of: 8 }, 'serving'],
      [{ hubId: 'hub-1', partitions: [2, 5], epochs: [1, 3], of: 8 }, 'serving'],
      [{ hubId: 'hub-1', of: 8 }, 'serving no partition'],
    ]);
  });

  it('logs a new epoch of the same partition: the hub lost and won it again', () => {
    const { hub, lines, watch } = watched(1, [{ partition: 0, epoch: 4 }]);
    hub.held = [{ partition: 0, epoch: 6 }];
    vi.advanceTimersByTime(1000);
    watch.stop();
    expect(lines).toEqual([
      [{ hubId: 'hub-1', partitions: [0], epochs: [4], of: 1 }, 'serving'],
      [{ hubId: 'hub-1', partitions: [0], epochs: [6], of: 1 }, 'serving'],
    ]);
  });
});
