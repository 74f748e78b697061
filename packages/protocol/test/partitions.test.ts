import { describe, expect, it } from 'vitest';
import {
  HUB_OP_NAMES,
  HealthSchema,
  MAX_PARTITIONS,
  fnv1a32,
  hubNames,
  partitionOf,
  partitionRuns,
  routeOf,
} from '../src/index.js';
import { readPartitionsFixture } from './partitions-fixture.js';

// conformance/fixtures/partitions.json: how every client finds a channel's partition and its subjects.
const fixture = readPartitionsFixture();

describe('partitions', () => {
  it('hashes channel ids with FNV-1a over UTF-8, as the fixture says', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
    for (const { channel_id, fnv1a32: hash, partition } of fixture.channels) {
      expect(fnv1a32(channel_id)).toBe(hash);
      for (const [count, k] of Object.entries(partition)) expect(partitionOf(channel_id, Number(count))).toBe(k);
    }
  });

  it('routes every operation as the fixture says, and the fixture names every operation', () => {
    expect(Object.keys(fixture.routes).sort()).toEqual([...HUB_OP_NAMES].sort());
    for (const op of HUB_OP_NAMES) expect(routeOf(op)).toBe(fixture.routes[op]);
  });

  it('names the subjects of a partitioned deployment as the fixture says', () => {
    const names = hubNames(fixture.subjects.prefix, fixture.subjects.partitions);
    for (const ex of fixture.subjects.examples) {
      const route = fixture.routes[ex.op];
      const k = ex.channel_id !== undefined ? names.partitionOf(ex.channel_id) : ex.partition;
      const subject = route === 'home' ? names.rpc(ex.op, ex.caller) : names.rpcIn(ex.op, k ?? -1, ex.caller ?? '');
      expect(subject).toBe(ex.subject);
    }
    const one = fixture.subjects.one_partition;
    expect(hubNames(fixture.subjects.prefix, 1).rpcIn(one.op, 0, one.caller)).toBe(one.subject);
  });

  it('keeps the names of a deployment with one partition', () => {
    const one = hubNames('acme');
    expect(one.partitions).toBe(1);
    expect(one.wal('ch-1')).toBe('acme.wal.ch-1');
    expect(one.walOf(0)).toBe('acme.wal.>');
    expect(one.leaseKey(0)).toBe('active');
    expect(one.deliveryConsumerOf(0)).toBe('hub_delivery');
    const many = hubNames('acme', 16);
    const k = many.partitionOf('ch-1');
    expect(many.wal('ch-1')).toBe(`acme.wal.${k}.ch-1`);
    expect(many.walOf(3)).toBe('acme.wal.3.>');
    expect(many.leaseKey(3)).toBe('active.3');
    expect(many.deliveryConsumerOf(3)).toBe('hub_delivery_3');
    expect(many.rpcListenIn('post', 3)).toBe('acme.hub.v1.post.3.*');
  });

  it('refuses a partition count outside 1..MAX_PARTITIONS', () => {
    for (const bad of [0, -1, 1.5, MAX_PARTITIONS + 1, Number.NaN]) {
      expect(() => partitionOf('x', bad)).toThrow(RangeError);
      expect(() => hubNames('acme', bad)).toThrow(RangeError);
    }
  });

  it("reads an older hub's health as one partition held by nobody", () => {
    const health = HealthSchema.parse({
      hub_id: 'h',
      role: 'active',
      epoch: 1,
      active_channels: 0,
      registered_agents: 0,
      adapters_loaded: 0,
      uptime_seconds: 1,
      quarantined: 0,
      dead_letters: 0,
    });
    expect(health.partitions).toBe(1);
    expect(health.held).toEqual([]);
  });
});

describe('partitionRuns', () => {
  it('names partitions as ascending runs without repeats', () => {
    expect([[6, 0, 1, 2, 3, 3], [7, 5, 4], [2], [1, 3, 5], []].map(partitionRuns)).toEqual([
      ['0-3', '6'],
      ['4-5', '7'],
      ['2'],
      ['1', '3', '5'],
      [],
    ]);
  });
});
