import { CONVERSATION_TYPE } from '@ag2net/adapters';
import type { Hub } from '@ag2net/hub';
import { newId, partitionOf } from '@ag2net/protocol';
import { natsPerFile, waitFor } from '@ag2net/test-support';
import { describe, expect, it, vi } from 'vitest';
import type { KvScan } from '../src/base/kv-scan.js';
import {
  openChannel,
  openNet,
  register,
  say,
  startColdHub,
  startPeerHub,
  type TestAgent,
  type TestNet,
} from './support.js';

/** Every pass over a KV bucket in this file's hubs, in the order they started. */
const passes = vi.hoisted(() => [] as { bucket: string; keys: string | null }[]);

vi.mock('../src/base/kv-scan.js', async (importOriginal) => {
  const original = await importOriginal<{ lastValues: (scan: KvScan) => AsyncGenerator<unknown> }>();
  return {
    ...original,
    lastValues: (scan: KvScan) => {
      passes.push({ bucket: scan.bucket, keys: scan.keys ?? null });
      return original.lastValues(scan);
    },
  };
});

const nats = natsPerFile();

const LEASE_TTL_MS = 1_500;
const P = 8;

/** A channel id in partition `k`. */
function idIn(k: number): string {
  for (;;) {
    const id = newId();
    if (partitionOf(id, P) === k) return id;
  }
}

/** How many passes over the channels and the open snapshots started since `from` (an index into `passes`). */
function passesSince(net: TestNet, from: number): { channels: number; snapshots: number } {
  const since = passes.slice(from);
  return {
    channels: since.filter((p) => p.bucket === net.names.channelsBucket).length,
    snapshots: since.filter((p) => p.bucket === net.names.snapshotsBucket && p.keys === 'open.>').length,
  };
}

/** What a hub serves of each channel: its state and the stream sequences of its log, by channel id. */
function served(hub: Hub): [string, string, readonly number[]][] {
  return hub
    .snapshot()
    .channels.map((c): [string, string, readonly number[]] => [c.metadata.channel_id, c.metadata.state, c.stream_seqs])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function held(hub: Hub): number[] {
  return hub
    .health()
    .held.map((h) => h.partition)
    .sort((a, b) => a - b);
}

/** Two conversations with a post each in every partition; their ids. */
async function channelsInEveryPartition(net: TestNet, alice: TestAgent, bob: TestAgent): Promise<string[]> {
  const ids = Array.from({ length: 2 * P }, (_, i) => idIn(i % P));
  for (const id of ids) {
    await openChannel(net, alice, CONVERSATION_TYPE, [bob], { channel_id: id });
    await say(net, alice, id, `hello ${id}`);
  }
  return ids;
}

describe('shared hydrate passes', () => {
  it('a hub taking eight partitions at once reads each bucket in one or two passes, and every partition gets its own channels', async () => {
    await using net = await openNet(nats.url, { partitions: P, leaseTtlMs: LEASE_TTL_MS });
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const ids = await channelsInEveryPartition(net, alice, bob);
    const before = served(net.hub);
    expect(before.map(([id]) => id)).toEqual([...ids].sort());
    // The close writes every open channel's snapshot, so that the next start reads both buckets.
    await net.hub.close();
    const from = passes.length;
    const hub = await startColdHub(net);
    expect(held(hub)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const { channels, snapshots } = passesSince(net, from);
    // One pass over the channels is the home replica's (the channel index); the partitions' hydrates share the rest.
    // Without sharing there would be one pass over each bucket per partition: 9 and 8.
    expect(snapshots).toBeGreaterThanOrEqual(1);
    expect(snapshots).toBeLessThanOrEqual(2);
    expect(channels - 1).toBeGreaterThanOrEqual(1);
    expect(channels - 1).toBeLessThanOrEqual(2);
    expect(served(hub)).toEqual(before);
    // Each partition serves its channels: every one takes a post, after its restored log.
    for (const [id, , seqs] of before) expect((await say(net, alice, id, 'again')).sequence).toBe(seqs.length + 1);
  });

  it('a partition taken over later reads the buckets afresh and finds what its previous owner wrote just before', async () => {
    await using net = await openNet(nats.url, { partitions: P, leaseTtlMs: LEASE_TTL_MS });
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const ids = await channelsInEveryPartition(net, alice, bob);
    const other = await startPeerHub(net);
    try {
      const taken = await waitFor(
        () => {
          const [a, b] = [held(net.hub), held(other)];
          return a.length + b.length === P && b.length === P / 2 ? b : undefined;
        },
        { what: 'the second hub to take its share', timeoutMs: 20_000 },
      );
      // A channel created in one of the second hub's partitions, and a post in every channel, just before it stops.
      const [k] = taken;
      if (k === undefined) throw new Error('the second hub holds nothing');
      const late = idIn(k);
      await openChannel(net, alice, CONVERSATION_TYPE, [bob], { channel_id: late });
      for (const id of [...ids, late]) await say(net, alice, id, 'last');
      const before = [...served(net.hub), ...served(other)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      const from = passes.length;
      await other.close();
      await waitFor(() => (held(net.hub).length === P ? true : undefined), {
        what: 'the first hub to take every partition back',
        timeoutMs: 20_000,
      });
      // Each partition taken back hydrated from a pass started after the other hub stopped (at most one per partition).
      const { channels, snapshots } = passesSince(net, from);
      expect(snapshots).toBeGreaterThanOrEqual(1);
      expect(snapshots).toBeLessThanOrEqual(P / 2);
      expect(channels).toBe(snapshots);
      expect(served(net.hub)).toEqual(before);
      // The creation's invite, acceptance and opening, and the post.
      expect(served(net.hub).find(([id]) => id === late)?.[2]).toHaveLength(4);
    } finally {
      await other.close();
    }
  });
});
