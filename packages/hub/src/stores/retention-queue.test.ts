import { describe, expect, it } from 'vitest';
import { RetentionQueue } from './retention-queue.js';

describe('RetentionQueue', () => {
  it('hands out the channels that ended by a time, oldest first, at most as many as asked', () => {
    const queue = new RetentionQueue();
    // Hydrate adds them in any order.
    for (const [id, at] of [
      ['c', 30],
      ['a', 10],
      ['d', 40],
      ['b', 20],
    ] as const) {
      queue.add(id, at);
    }
    expect(queue.due(30, 16, 0)).toEqual(['a', 'b', 'c']);
    expect(queue.due(40, 2, 0)).toEqual(['a', 'b']);
    expect(queue.due(9, 16, 0)).toEqual([]);
  });

  it('drops a channel once its history is gone, and ignores one added twice', () => {
    const queue = new RetentionQueue();
    queue.add('a', 10);
    queue.add('b', 20);
    queue.add('a', 5);
    queue.delete('a');
    expect(queue.due(100, 16, 0)).toEqual(['b']);
    expect(queue.size).toBe(1);
    queue.add('c', 30);
    expect(queue.due(100, 16, 0)).toEqual(['b', 'c']);
  });

  it('pauses after a failure, doubling from 1 s to 5 minutes, until a removal succeeds', () => {
    const queue = new RetentionQueue();
    queue.add('a', 0);
    expect(queue.failed(1_000)).toBe(1);
    expect([queue.due(0, 16, 1_999), queue.due(0, 16, 2_000)]).toEqual([[], ['a']]);
    expect(queue.failed(2_000)).toBe(2);
    expect([queue.due(0, 16, 3_999), queue.due(0, 16, 4_000)]).toEqual([[], ['a']]);
    for (let i = 0; i < 20; i += 1) queue.failed(4_000);
    expect([queue.due(0, 16, 303_999), queue.due(0, 16, 304_000)]).toEqual([[], ['a']]);
    queue.succeeded();
    expect(queue.failed(10_000)).toBe(1);
  });

  it('notes nothing once switched off (a hub that keeps every history)', () => {
    const queue = new RetentionQueue();
    queue.add('a', 0);
    queue.off();
    queue.add('b', 0);
    expect([queue.size, queue.due(100, 16, 0)]).toEqual([0, []]);
  });

  it('runs one removal run at a time', () => {
    const queue = new RetentionQueue();
    expect([queue.begin(), queue.begin()]).toEqual([true, false]);
    queue.end();
    expect(queue.begin()).toBe(true);
  });
});
