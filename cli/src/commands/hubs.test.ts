import { HealthSchema, type DeliveryLag, type Health } from '@ag2net/protocol';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Output } from '../output.js';
import { partitionRanges, printHubStatus } from './hubs.js';

/** A hub's health as the roster reports it. */
function hub(fields: Partial<Health> & Pick<Health, 'hub_id' | 'role'>): Health {
  return HealthSchema.parse({
    epoch: 0,
    active_channels: 0,
    registered_agents: 6,
    adapters_loaded: 4,
    uptime_seconds: 62,
    quarantined: 0,
    dead_letters: 0,
    ...fields,
  });
}

const LAG: DeliveryLag = { pending: 0, ack_pending: 0, oldest_pending_age_seconds: null };

/** What `ag2net hubs` prints for `hubs` and `delivery`, without colours (standard output is not a terminal). */
function printed(hubs: readonly Health[], delivery: DeliveryLag | null = LAG): string[] {
  let out = '';
  const output = new Output(
    {
      out: (t) => void (out += t),
      err: () => undefined,
      lines: () => Readable.from([]),
      env: {},
      isTty: false,
      signal: new AbortController().signal,
    },
    { json: false },
  );
  printHubStatus(output, hubs, delivery);
  return out.trimEnd().split('\n');
}

describe('ag2net hubs, as a table', () => {
  it('shows one partition as the active hub and its standby, with the partition count', () => {
    const hubs = [
      hub({ hub_id: 'hub-a', role: 'active', epoch: 7, active_channels: 3, held: [{ partition: 0, epoch: 7 }] }),
      hub({ hub_id: 'hub-b', role: 'standby', uptime_seconds: 5 }),
    ];
    expect(printed(hubs)).toEqual([
      'HUB    ROLE     EPOCH  UPTIME  CHANNELS',
      'hub-a  active   7      1m 2s   3',
      'hub-b  standby  0      5s      0',
      '',
      'partitions      1',
      'pending         0',
      'ack pending     0',
      'oldest pending  -',
    ]);
  });

  it("shows each hub's partitions, and each partition's holder and epoch", () => {
    const held = (...pairs: [number, number][]) => pairs.map(([partition, epoch]) => ({ partition, epoch }));
    const hubs = [
      hub({
        hub_id: 'hub-1',
        role: 'active',
        epoch: 4,
        active_channels: 5,
        partitions: 8,
        held: held([4, 2], [5, 2], [0, 4], [1, 4], [2, 4], [3, 4]),
      }),
      hub({ hub_id: 'hub-2', role: 'active', epoch: 3, active_channels: 2, partitions: 8, held: held([6, 3], [7, 3]) }),
      hub({ hub_id: 'hub-3', role: 'standby', partitions: 8, uptime_seconds: 3 }),
    ];
    expect(printed(hubs, { pending: 2, ack_pending: 1, oldest_pending_age_seconds: 4.2 })).toEqual([
      'HUB    ROLE     PARTITIONS  UPTIME  CHANNELS',
      'hub-1  active   0-5         1m 2s   5',
      'hub-2  active   6-7         1m 2s   2',
      'hub-3  standby  -           3s      0',
      '',
      'PARTITION  HUB    EPOCH',
      '0          hub-1  4',
      '1          hub-1  4',
      '2          hub-1  4',
      '3          hub-1  4',
      '4          hub-1  2',
      '5          hub-1  2',
      '6          hub-2  3',
      '7          hub-2  3',
      '',
      'partitions      8',
      'pending         2',
      'ack pending     1',
      'oldest pending  4s',
    ]);
  });

  it('shows a partition no hub holds as -, and both hubs of a partition that is moving', () => {
    const hubs = [
      hub({
        hub_id: 'hub-1',
        role: 'active',
        epoch: 2,
        partitions: 4,
        held: [
          { partition: 0, epoch: 2 },
          { partition: 1, epoch: 2 },
        ],
      }),
      hub({
        hub_id: 'hub-2',
        role: 'active',
        epoch: 5,
        partitions: 4,
        held: [
          { partition: 1, epoch: 5 },
          { partition: 3, epoch: 1 },
        ],
      }),
    ];
    expect(printed(hubs).slice(4, 10)).toEqual([
      'PARTITION  HUB    EPOCH',
      '0          hub-1  2',
      '1          hub-1  2',
      '1          hub-2  5',
      '2          -      -',
      '3          hub-2  1',
    ]);
  });

  it('says so when no hub answered', () => {
    expect(printed([], null)).toEqual([
      'no hub answered',
      '',
      'partitions  -',
      'no delivery consumer: no hub has started on this prefix',
    ]);
  });
});

describe('partitionRanges', () => {
  it('writes runs of partitions as ranges, in order, and none as -', () => {
    expect([[0, 1, 2, 3, 6], [7, 5, 4], [2], [1, 3], []].map(partitionRanges)).toEqual([
      '0-3, 6',
      '4-5, 7',
      '2',
      '1, 3',
      '-',
    ]);
  });
});
