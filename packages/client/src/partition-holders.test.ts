import type { Health } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { heldBy, partitionHolders } from './hub-roster.js';

function hub(hubId: string, fields: Partial<Health>): Health {
  return {
    hub_id: hubId,
    role: 'active',
    epoch: 0,
    active_channels: 0,
    registered_agents: 0,
    adapters_loaded: 4,
    uptime_seconds: 1,
    quarantined: 0,
    dead_letters: 0,
    partitions: 4,
    held: [],
    ...fields,
  };
}

describe('partitionHolders', () => {
  it('lists every partition with the hubs holding it, none for a partition no hub holds', () => {
    const hubs = [
      hub('hub-a', {
        held: [
          { partition: 0, epoch: 1 },
          { partition: 3, epoch: 2 },
        ],
      }),
      hub('hub-b', { held: [{ partition: 1, epoch: 5 }] }),
      hub('hub-c', { role: 'standby' }),
    ];
    expect(partitionHolders(hubs, 4)).toEqual([
      { partition: 0, held_by: [{ hub_id: 'hub-a', epoch: 1 }] },
      { partition: 1, held_by: [{ hub_id: 'hub-b', epoch: 5 }] },
      { partition: 2, held_by: [] },
      { partition: 3, held_by: [{ hub_id: 'hub-a', epoch: 2 }] },
    ]);
  });

  it('names both hubs of a partition that moves between them', () => {
    const hubs = [
      hub('hub-a', { held: [{ partition: 0, epoch: 1 }] }),
      hub('hub-b', { held: [{ partition: 0, epoch: 2 }] }),
    ];
    expect(partitionHolders(hubs, 1)).toEqual([
      {
        partition: 0,
        held_by: [
          { hub_id: 'hub-a', epoch: 1 },
          { hub_id: 'hub-b', epoch: 2 },
        ],
      },
    ]);
  });

  it('lists every partition without a holder when no hub answered', () => {
    expect(partitionHolders([], 2)).toEqual([
      { partition: 0, held_by: [] },
      { partition: 1, held_by: [] },
    ]);
  });
});

describe('heldBy', () => {
  it("takes an active hub from before partitions as the only partition's holder", () => {
    expect(heldBy(hub('old', { partitions: 1, epoch: 7 }))).toEqual([{ partition: 0, epoch: 7 }]);
    expect(heldBy(hub('old', { partitions: 1, role: 'standby' }))).toEqual([]);
  });

  it('reads what a hub reports it holds', () => {
    expect(heldBy(hub('new', { partitions: 1, epoch: 7, held: [{ partition: 0, epoch: 7 }] }))).toEqual([
      { partition: 0, epoch: 7 },
    ]);
    expect(heldBy(hub('new', { partitions: 4 }))).toEqual([]);
  });
});
