/**
 * A client of a partitioned deployment sends each request to the owner of its partition, over a real nats-server:
 * plain NATS subscribers play the hub's home partition (answering `health`) and the owners of each partition
 * (answering on their own `rpcIn` subjects, with canned replies, for their own channels only).
 */
import { HubClient, Participant, type DeliveryOutcome } from '@ag2net/client';
import {
  HUB_OPS,
  OPERATOR_CALLER,
  PassportSchema,
  hubNames,
  partitionOf,
  type DeliveryLag,
  type HubNames,
  type HubOp,
  type Passport,
  type PendingTurn,
} from '@ag2net/protocol';
import { natsPerFile, uniqueName } from '@ag2net/test-support';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';

const nats = natsPerFile();
const open: { close(): Promise<void> }[] = [];

afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

/** A participant that only makes calls: it never consumes an inbox, so no hub is needed to start it. */
class Caller extends Participant {
  static of(hub: HubClient, passport: Passport): Caller {
    return new Caller(hub, passport);
  }

  protected handle(): Promise<DeliveryOutcome> {
    return Promise.resolve({ settle: 'ack' });
  }
}

/** A validated request, read field by field. */
const Fields = z.record(z.string(), z.unknown());

/** One request an owner received: which owner (partition), the subject, and the validated request. */
interface Received {
  readonly partition: number;
  readonly subject: string;
  readonly op: HubOp;
  readonly request: Record<string, unknown>;
}

/** What the partition owners answer, per partition: channels to list, turns to report, the delivery lag. */
interface Canned {
  readonly channels: readonly string[];
  readonly turns: readonly PendingTurn[];
  readonly lag: DeliveryLag | null;
}

/** Channel metadata as a hub would list it (the schema's defaults fill the rest). */
function metadata(channelId: string): unknown {
  return {
    channel_id: channelId,
    manifest: { type: 'conversation' },
    creator_id: 'alice-1',
    participants: [{ agent_id: 'alice-1', role: 'initiator', order: 0 }],
    state: 'active',
    created_at: '2026-05-09T12:00:00Z',
  };
}

/** `count` channel ids whose partition in a deployment of `partitions` is `partition`. */
function channelsOf(partition: number, count: number, partitions: number): string[] {
  const out: string[] = [];
  for (let n = 0; out.length < count; n += 1) {
    const id = `ch-${n}`;
    if (partitionOf(id, partitions) === partition) out.push(id);
  }
  return out;
}

/** How many channels a page of `listChannels` holds at most, whatever the request's limit: lists span pages. */
const PAGE = 2;

/** The answer of `op` from the owner of `partition`, for its own canned data. */
function answer(op: HubOp, request: Record<string, unknown>, canned: Canned, names: HubNames): unknown {
  switch (op) {
    case 'listChannels': {
      const start = typeof request['cursor'] === 'string' ? Number(request['cursor']) : 0;
      const limit = typeof request['limit'] === 'number' ? request['limit'] : 50;
      const end = Math.min(start + Math.min(limit, PAGE), canned.channels.length);
      const next = end < canned.channels.length ? String(end) : null;
      return { channels: canned.channels.slice(start, end).map(metadata), next_cursor: next };
    }
    case 'pendingTurnsFor':
      return { turns: canned.turns };
    case 'deliveryLag':
      return { delivery: canned.lag };
    case 'createChannel':
      return { channel: metadata(String(request['channel_id'])) };
    case 'getAgent':
      return { passport: { name: 'bob', agent_id: 'bob-1' } };
    case 'post':
      return { envelope_id: request['envelope_id'], sequence: 1, created_at: '2026-05-09T12:00:01Z' };
    case 'health':
      return {
        hub_id: 'hub-home',
        role: 'active',
        epoch: 1,
        active_channels: 0,
        registered_agents: 0,
        adapters_loaded: 0,
        uptime_seconds: 1,
        quarantined: 0,
        dead_letters: 0,
        partitions: names.partitions,
        held: [{ partition: 0, epoch: 1 }],
      };
    default:
      throw new Error(`no canned answer for ${op}`);
  }
}

/** The operations each partition's owner answers here. */
const OWNED: readonly HubOp[] = ['listChannels', 'pendingTurnsFor', 'deliveryLag', 'post', 'createChannel'];

/**
 * A deployment of `partitions` partitions played by plain subscribers on one connection: `health` and `getAgent` on
 * the home subjects, and each partition's owner on `rpcListenIn(op, k)` for its own operations. Every request is recorded.
 */
async function deployment(
  partitions: number,
  canned: (partition: number) => Canned,
): Promise<{ prefix: string; received: Received[] }> {
  const prefix = uniqueName('part');
  const names = hubNames(prefix, partitions);
  const nc: NatsConnection = await connect({ servers: nats.url });
  open.push(nc);
  const received: Received[] = [];
  const serve = (subject: string, op: HubOp, partition: number): void => {
    nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err !== null) return;
        const request = Fields.parse(HUB_OPS[op].request.parse(msg.json()));
        received.push({ partition, subject: msg.subject, op, request });
        msg.respond(JSON.stringify({ ok: true, result: answer(op, request, canned(partition), names) }));
      },
    });
  };
  serve(names.rpc('health'), 'health', 0);
  serve(names.rpc('getAgent'), 'getAgent', 0);
  for (let k = 0; k < partitions; k += 1) for (const op of OWNED) serve(names.rpcListenIn(op, k), op, k);
  await nc.flush();
  return { prefix, received };
}

const at = (minute: number): string => `2026-05-09T12:${String(minute).padStart(2, '0')}:00Z`;

describe('a client of a deployment of 4 partitions', () => {
  const P = 4;
  // Partition 0 lists 3 channels (two pages), 1 none, 2 two, 3 two; each reports turns and a lag of its own.
  // (fnv1a32 mod 4 of ch-0 … ch-9: 3, 0, 1, 2, 3, 0, 1, 2, 3, 0.)
  const lists = [channelsOf(0, 3, P), [], channelsOf(2, 2, P), channelsOf(3, 2, P)];
  const turnsOf = (k: number): PendingTurn[] =>
    (lists[k] ?? []).map((channel_id, i) => ({
      channel_id,
      triggering_envelope_id: null,
      expected_at: at(10 - 3 * i - k),
    }));
  const lags: (DeliveryLag | null)[] = [
    { pending: 3, ack_pending: 1, oldest_pending_age_seconds: 2.5 },
    null,
    { pending: 0, ack_pending: 0, oldest_pending_age_seconds: null },
    { pending: 4, ack_pending: 2, oldest_pending_age_seconds: 9 },
  ];
  const canned = (k: number): Canned => ({ channels: lists[k] ?? [], turns: turnsOf(k), lag: lags[k] ?? null });

  it("lists every partition's channels, partition after partition, each page by page, up to the limit", async () => {
    const { prefix, received } = await deployment(P, canned);
    const hub = await HubClient.connect({ servers: nats.url, prefix, operator: true });
    open.push(hub);

    const listed = await hub.listChannels({ limit: 6, state: 'active' });

    expect(lists).toEqual([['ch-1', 'ch-5', 'ch-9'], [], ['ch-3', 'ch-7'], ['ch-0', 'ch-4']]);
    expect(listed.map((c) => c.channel_id)).toEqual(['ch-1', 'ch-5', 'ch-9', 'ch-3', 'ch-7', 'ch-0']);
    expect(received.map((r) => [r.op, r.partition, r.request['limit'], r.request['cursor']])).toEqual([
      ['health', 0, undefined, undefined],
      ['listChannels', 0, 6, null],
      ['listChannels', 0, 4, '2'],
      ['listChannels', 1, 3, null],
      ['listChannels', 2, 3, null],
      ['listChannels', 3, 1, null],
    ]);
    const names = hubNames(prefix, P);
    expect(received.slice(1).map((r) => r.subject)).toEqual(
      [0, 0, 1, 2, 3].map((k) => names.rpcIn('listChannels', k, OPERATOR_CALLER)),
    );
    // The same filter went to every partition.
    expect(new Set(received.slice(1).map((r) => r.request['state']))).toEqual(new Set(['active']));
  });

  it("joins every partition's pending turns by when they were expected, and sums the delivery lags", async () => {
    const { prefix, received } = await deployment(P, canned);
    const hub = await HubClient.connect({ servers: nats.url, prefix, operator: true });
    open.push(hub);
    const alice = Caller.of(hub, PassportSchema.parse({ name: 'alice', agent_id: 'alice-1' }));

    const turns = await alice.pendingTurns();
    const lag = await hub.deliveryLag();

    // Expected at 12:10, 12:07, 12:04 in partition 0; 12:08, 12:05 in 2; 12:07, 12:04 in 3: ties go by channel id.
    expect(turns.map((t) => [t.expected_at, t.channel_id])).toEqual([
      [at(4), 'ch-4'],
      [at(4), 'ch-9'],
      [at(5), 'ch-7'],
      [at(7), 'ch-0'],
      [at(7), 'ch-5'],
      [at(8), 'ch-3'],
      [at(10), 'ch-1'],
    ]);
    expect(lag).toEqual({ pending: 7, ack_pending: 3, oldest_pending_age_seconds: 9 });
    const asked = (op: HubOp): number[] =>
      received
        .filter((r) => r.op === op)
        .map((r) => r.partition)
        .sort();
    expect(asked('pendingTurnsFor')).toEqual([0, 1, 2, 3]);
    expect(asked('deliveryLag')).toEqual([0, 1, 2, 3]);
    const names = hubNames(prefix, P);
    for (const r of received.filter((x) => x.op !== 'health')) {
      const caller = r.op === 'deliveryLag' ? OPERATOR_CALLER : 'alice-1';
      expect(r.subject).toBe(names.rpcIn(r.op, r.partition, caller));
    }
  });

  it("sends each post to the owner of its channel's partition, and only there", async () => {
    const { prefix, received } = await deployment(P, canned);
    const hub = await HubClient.connect({ servers: nats.url, prefix });
    open.push(hub);
    const alice = Caller.of(hub, PassportSchema.parse({ name: 'alice', agent_id: 'alice-1' }));
    const channels = ['ch-0', 'ch-1', 'ch-2', 'ch-3', 'ch-4', 'ch-5', 'ch-6', 'ch-7'];

    const ids = await Promise.all(channels.map((c) => alice.send(c, `hello ${c}`)));

    const posts = received.filter((r) => r.op === 'post');
    expect(posts.map((r) => [r.request['channel_id'], r.partition]).sort()).toEqual([
      ['ch-0', 3],
      ['ch-1', 0],
      ['ch-2', 1],
      ['ch-3', 2],
      ['ch-4', 3],
      ['ch-5', 0],
      ['ch-6', 1],
      ['ch-7', 2],
    ]);
    const names = hubNames(prefix, P);
    expect(posts.map((r) => r.subject).sort()).toEqual(
      posts.map((r) => names.rpcIn('post', r.partition, 'alice-1')).sort(),
    );
    expect(posts.map((r) => r.request['envelope_id']).sort()).toEqual([...ids].sort());
    expect(received.filter((r) => r.op === 'health')).toHaveLength(1);
  });

  it("opens a channel under an id it minted, at the owner of that id's partition", async () => {
    const { prefix, received } = await deployment(P, canned);
    const hub = await HubClient.connect({ servers: nats.url, prefix });
    open.push(hub);
    const alice = Caller.of(hub, PassportSchema.parse({ name: 'alice', agent_id: 'alice-1' }));

    const channel = await alice.open({ type: 'conversation', target: 'bob' });

    const created = received.filter((r) => r.op === 'createChannel');
    expect(created.map((r) => [r.request['channel_id'], r.request['participants']])).toEqual([
      [channel.channelId, ['bob-1']],
    ]);
    expect(created[0]?.subject).toBe(
      hubNames(prefix, P).rpcIn('createChannel', partitionOf(channel.channelId, P), 'alice-1'),
    );
    expect(received.map((r) => r.op)).toEqual(['getAgent', 'health', 'createChannel']);
  });
});

describe('a client of a deployment of one partition', () => {
  it("sends one request per operation, to today's subjects", async () => {
    const channels = ['ch-a', 'ch-b'];
    const { prefix, received } = await deployment(1, () => ({
      channels,
      turns: [{ channel_id: 'ch-b', triggering_envelope_id: null, expected_at: at(5) }],
      lag: { pending: 1, ack_pending: 0, oldest_pending_age_seconds: 0.5 },
    }));
    const hub = await HubClient.connect({ servers: nats.url, prefix, operator: true });
    open.push(hub);
    const alice = Caller.of(hub, PassportSchema.parse({ name: 'alice', agent_id: 'alice-1' }));

    expect((await hub.listChannels()).map((c) => c.channel_id)).toEqual(channels);
    expect(await alice.pendingTurns()).toEqual([
      { channel_id: 'ch-b', triggering_envelope_id: null, expected_at: at(5) },
    ]);
    expect(await hub.deliveryLag()).toEqual({ pending: 1, ack_pending: 0, oldest_pending_age_seconds: 0.5 });
    await alice.send('ch-a', 'hello');

    const names = hubNames(prefix);
    expect(received.map((r) => r.subject)).toEqual([
      names.rpc('health'),
      names.rpc('listChannels', OPERATOR_CALLER),
      names.rpc('pendingTurnsFor', 'alice-1'),
      names.rpc('deliveryLag', OPERATOR_CALLER),
      names.rpc('post', 'alice-1'),
    ]);
  });
});
