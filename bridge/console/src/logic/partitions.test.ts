import type { Health } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { answeringHeld, partitionRanges, partitionsOf, servingSummary, unheldWarning } from './partitions.js';

const health: Health = {
  hub_id: 'hub-a',
  role: 'active',
  epoch: 3,
  active_channels: 0,
  registered_agents: 0,
  adapters_loaded: 4,
  uptime_seconds: 10,
  quarantined: 0,
  dead_letters: 0,
  partitions: 1,
  held: [],
};

const holders = [
  { partition: 0, held_by: [{ hub_id: 'hub-a', epoch: 1 }] },
  { partition: 1, held_by: [{ hub_id: 'hub-b', epoch: 2 }] },
  { partition: 2, held_by: [] },
  { partition: 3, held_by: [{ hub_id: 'hub-a', epoch: 4 }] },
];

describe('partitionRanges', () => {
  it('writes runs of partitions, in order, once each', () => {
    expect(partitionRanges([6, 0, 1, 2, 3, 3])).toBe('0-3, 6');
    expect(partitionRanges([5])).toBe('5');
    expect(partitionRanges([1, 3])).toBe('1, 3');
    expect(partitionRanges([])).toBe('none');
  });
});

describe('answeringHeld', () => {
  it("lists the answering hub's held partitions", () => {
    const held = [{ partition: 2, epoch: 5 }];
    expect(answeringHeld({ health: { ...health, partitions: 4, held }, lease: null })).toEqual(held);
  });
  it('takes the lease of a hub from before partitions as its only partition', () => {
    expect(answeringHeld({ health, lease: { holder: 'hub-a', epoch: 3 } })).toEqual([{ partition: 0, epoch: 3 }]);
    expect(answeringHeld({ health: { ...health, role: 'standby' }, lease: null })).toEqual([]);
  });
});

describe('partitionsOf', () => {
  it("finds a hub's partitions among the holders, none for a standby", () => {
    expect(partitionsOf('hub-a', holders)).toEqual([0, 3]);
    expect(partitionsOf('hub-b', holders)).toEqual([1]);
    expect(partitionsOf('hub-c', holders)).toEqual([]);
  });
});

describe('unheldWarning', () => {
  it('says nothing while every partition has a holder', () => {
    expect(unheldWarning([], 4)).toBeNull();
  });
  it('names the partitions no hub holds', () => {
    expect(unheldWarning([2], 4)).toBe(
      'No hub holds partition 2: its channels are not served until a hub takes it over.',
    );
    expect(unheldWarning([1, 2, 5], 8)).toBe(
      'No hub holds partitions 1-2, 5: their channels are not served until a hub takes them over.',
    );
  });
  it('says so when no partition has a holder', () => {
    expect(unheldWarning([0, 1, 2, 3], 4)).toBe(
      'No hub holds any of the 4 partitions: no channel is served until a hub takes them over.',
    );
    expect(unheldWarning([0], 1)).toBe('No hub holds the partition: no channel is served until a hub takes it over.');
  });
});

describe('servingSummary', () => {
  it('counts the held partitions and the hubs holding them', () => {
    expect(servingSummary(4, holders)).toBe('3 of 4 partitions held by 2 hubs.');
    expect(
      servingSummary(
        4,
        holders.map((p) => ({ ...p, held_by: [{ hub_id: 'hub-a', epoch: 1 }] })),
      ),
    ).toBe('All 4 partitions held by 1 hub.');
    expect(
      servingSummary(
        4,
        holders.map((p) => ({ ...p, held_by: [] })),
      ),
    ).toBe('4 partitions, none held.');
  });
});
