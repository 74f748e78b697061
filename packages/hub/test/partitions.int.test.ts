import { CONVERSATION_TYPE } from '@ag2net/adapters';
import { startHub, type Hub } from '@ag2net/hub';
import { EV_TASK_CANCELLED, EV_TEXT, newId, partitionOf, type Health } from '@ag2net/protocol';
import { natsPerFile, uniqueName, waitFor } from '@ag2net/test-support';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import {
  asOperator,
  drained,
  failure,
  openChannel,
  openNet,
  post,
  rawFailure,
  readWal,
  register,
  say,
  type TestAgent,
  type TestNet,
  startPeerHub,
} from './support.js';

const nats = natsPerFile();

/** A short lease, so that hand-overs (two lease times after a hub joins) and expiries come quickly. */
const LEASE_TTL_MS = 1_500;
const P = 8;

/** A channel id in partition `k` of `partitions`. */
function idIn(k: number, partitions: number): string {
  for (;;) {
    const id = newId();
    if (partitionOf(id, partitions) === k) return id;
  }
}

/** The partitions a hub serves now. */
function held(hub: Hub): number[] {
  return hub
    .health()
    .held.map((h) => h.partition)
    .sort((a, b) => a - b);
}

/** Waits until `hubs` serve every partition between them, each exactly once, and returns who holds what. */
async function settled(hubs: readonly Hub[], what: string): Promise<number[][]> {
  return waitFor(
    () => {
      const each = hubs.map(held);
      const all = each.flat().sort((a, b) => a - b);
      const complete = all.length === P && all.every((k, i) => k === i);
      return complete && each.every((h) => h.length > 0) ? each : undefined;
    },
    { what, timeoutMs: 20_000 },
  );
}

/** A conversation in partition `k` between `a` and `b`. */
async function conversationIn(net: TestNet, k: number, a: TestAgent, b: TestAgent): Promise<string> {
  const channel = await openChannel(net, a, CONVERSATION_TYPE, [b], { channel_id: idIn(k, P) });
  return channel.channel_id;
}

describe('partitions', () => {
  it('one hub serves every partition, writes each channel under its own, and refuses a request for another partition', async () => {
    await using net = await openNet(nats.url, { partitions: 4 });
    const health: Health = net.hub.health();
    expect([health.partitions, held(net.hub)]).toEqual([4, [0, 1, 2, 3]]);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const channels = [0, 1, 2, 3].map((k) => idIn(k, 4));
    for (const id of channels) await openChannel(net, alice, CONVERSATION_TYPE, [bob], { channel_id: id });
    for (const id of channels) await say(net, alice, id, `hello ${id}`);
    for (const id of channels) {
      await bob.mailbox.waitFor((e) => e.channel_id === id && e.event_type === EV_TEXT, `the text of ${id}`);
      expect(bob.mailbox.of(id, EV_TEXT)).toHaveLength(1);
      const wal = await readWal(net, bob, id);
      expect(wal.map((e) => e.sequence)).toEqual(wal.map((_, i) => i + 1));
    }
    // Each channel's entries are on its partition's subject, and its partition's consumer delivered them.
    const jsm = await jetstreamManager(net.nc);
    for (const id of channels) {
      const k = partitionOf(id, 4);
      const last = await jsm.streams.getMessage(net.names.walStream, { last_by_subj: `${net.prefix}.wal.${k}.${id}` });
      expect(last?.subject).toBe(net.names.wal(id));
    }
    const consumers = await Promise.all(
      [0, 1, 2, 3].map((k) => jsm.consumers.info(net.names.walStream, net.names.deliveryConsumerOf(k))),
    );
    expect(consumers.map((c) => c.delivered.stream_seq > 0)).toEqual([true, true, true, true]);
    // A channel operation sent to the owner of another partition is refused, naming the channel's partition.
    const [first] = channels;
    if (first === undefined) throw new Error('no channel');
    const k = partitionOf(first, 4);
    const wrong = (k + 1) % 4;
    expect(
      await rawFailure(net, net.names.rpcIn('getChannel', wrong, alice.id), JSON.stringify({ channel_id: first })),
    ).toEqual({
      code: 'invalid_request',
      message: `channel ${first} is in partition ${k}, not ${wrong}: send getChannel to ${net.prefix}.hub.v1.getChannel.${k}.<caller>`,
    });
    // A client that does not route is told so at once.
    expect(await rawFailure(net, net.names.rpc('getChannel', alice.id), JSON.stringify({ channel_id: first }))).toEqual(
      {
        code: 'invalid_request',
        message:
          "getChannel must be sent to its partition's subject, <prefix>.hub.v1.getChannel.<partition>.<caller>: " +
          "this deployment's channels are spread over 4 partitions (Health.partitions)",
      },
    );
    // And a creation that names no channel cannot be routed.
    expect(
      await rawFailure(
        net,
        net.names.rpcIn('createChannel', 0, alice.id),
        JSON.stringify({ type: CONVERSATION_TYPE, participants: [bob.id] }),
      ),
    ).toEqual({
      code: 'invalid_request',
      message: "createChannel needs a channel_id: this deployment's channels are in partitions",
    });
  });

  it('serves 16 partitions without a warning from the process (every partition listens to the hub’s stop)', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    try {
      const hub = await startHub({ servers: nats.url, prefix: uniqueName('sixteen'), partitions: 16 });
      expect(held(hub)).toHaveLength(16);
      await hub.close();
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).toEqual([]);
  });

  it('refuses a hub started with another partition count than its prefix was provisioned with', async () => {
    await using net = await openNet(nats.url, { partitions: 4 });
    const refused = await startHub({ servers: net.url, prefix: net.prefix, partitions: 8 }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(Error);
    expect((refused as { code?: unknown }).code).toBe('invalid_config');
    expect((refused as Error).message).toContain(
      `prefix ${net.prefix} was provisioned with another partition count than 8`,
    );
    await expect(startHub({ servers: net.url, prefix: net.prefix })).rejects.toMatchObject({ code: 'invalid_config' });
  });

  it('two hubs provisioning a new prefix with the same count at once both start, and split it', async () => {
    const prefix = uniqueName('together');
    const start = (hubId: string): Promise<Hub> =>
      startHub({ servers: nats.url, prefix, hubId, partitions: P, leaseTtlMs: LEASE_TTL_MS, awaitActive: false });
    const hubs = await Promise.all([start('hub-x'), start('hub-y')]);
    try {
      await settled(hubs, 'both hubs to serve a share');
      // Whichever campaigned first took more; hand-overs even the shares out.
      const shares = await waitFor(
        () => {
          const each = hubs.map(held);
          return each.every((h) => h.length === P / 2) ? each : undefined;
        },
        { what: 'both hubs to hold half the partitions', timeoutMs: 20_000 },
      );
      expect(shares.flat().sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    } finally {
      await Promise.all(hubs.map((h) => h.close()));
    }
  });

  it('two hubs split the partitions; one whose connection dies loses only its share, taken over with nothing lost', async () => {
    const ncA = await connect({ servers: nats.url });
    await using net = await openNet(nats.url, { partitions: P, leaseTtlMs: LEASE_TTL_MS, connection: ncA });
    const a = net.hub;
    const b = await startPeerHub(net);
    try {
      const [heldA, heldB] = await settled([a, b], 'both hubs to serve a share');
      const alice = await register(net, 'alice');
      const bob = await register(net, 'bob');
      // One channel in every partition; each hub admits the channels of its own.
      const channels = await Promise.all(Array.from({ length: P }, (_, k) => conversationIn(net, k, alice, bob)));
      for (const id of channels) await say(net, alice, id, 'before');
      // Hub A dies: its connection closes without a release; B takes A's partitions over once it sees it gone.
      ncA.close().catch(() => undefined);
      await waitFor(() => held(b).length === P, {
        what: 'hub B to take over every partition of the dead hub A',
        timeoutMs: 15_000,
      });
      expect(heldA?.length ?? 0).toBeGreaterThan(0);
      expect(heldB?.length ?? 0).toBeGreaterThan(0);
      for (const id of channels) await say(net, bob, id, 'after');
      for (const id of channels) {
        await alice.mailbox.waitFor((e) => e.channel_id === id && e.event_type === EV_TEXT, `bob's text in ${id}`);
        const wal = await readWal(net, alice, id);
        expect(wal.map((e) => e.sequence)).toEqual(wal.map((_, i) => i + 1));
        expect(wal.filter((e) => e.event_type === EV_TEXT).map((e) => (e.event_data as { text: string }).text)).toEqual(
          ['before', 'after'],
        );
        expect(bob.mailbox.of(id, EV_TEXT)).toHaveLength(1);
        expect(alice.mailbox.of(id, EV_TEXT)).toHaveLength(1);
      }
    } finally {
      await b.close();
    }
  });

  it('a hub that joins takes its share by hand-over while posts go on, and no post fails', async () => {
    await using net = await openNet(nats.url, { partitions: P, leaseTtlMs: LEASE_TTL_MS });
    expect(held(net.hub)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const channels = await Promise.all(Array.from({ length: P }, (_, k) => conversationIn(net, k, alice, bob)));
    let stop = false;
    const acked = new Map<string, number>();
    const failures: string[] = [];
    const load = (async () => {
      for (let round = 0; !stop; round += 1) {
        await Promise.all(
          channels.map(async (id) => {
            try {
              await say(net, alice, id, `${round}`);
              acked.set(id, (acked.get(id) ?? 0) + 1);
            } catch (err) {
              failures.push(`${id}: ${String(err)}`);
            }
          }),
        );
        // Within alice's default rate (100 a second, bursts of 1 000) for the whole move.
        await new Promise((resolve) => setTimeout(resolve, 60));
      }
    })();
    const b = await startPeerHub(net);
    try {
      const [heldA, heldB] = await settled([net.hub, b], 'the joining hub to take its share');
      stop = true;
      await load;
      expect(failures).toEqual([]);
      expect((heldA?.length ?? 0) + (heldB?.length ?? 0)).toBe(P);
      for (const id of channels) {
        const wal = await readWal(net, bob, id);
        const texts = wal.filter((e) => e.event_type === EV_TEXT);
        expect(texts).toHaveLength(acked.get(id) ?? -1);
        expect(wal.map((e) => e.sequence)).toEqual(wal.map((_, i) => i + 1));
      }
    } finally {
      stop = true;
      await load;
      await b.close();
    }
  });

  it("an inbox fills across partitions that different hubs own: its cap counts every partition's envelopes", async () => {
    await using net = await openNet(nats.url, { partitions: P, leaseTtlMs: LEASE_TTL_MS });
    const b = await startPeerHub(net);
    try {
      const [heldA, heldB] = await settled([net.hub, b], 'both hubs to serve a share');
      const alice = await register(net, 'alice');
      const carol = await register(net, 'carol', { rule: { limits: { inbox: { max_pending: 3 } } } });
      const onA = await conversationIn(net, heldA?.[0] ?? -1, alice, carol);
      const onB = await conversationIn(net, heldB?.[0] ?? -1, alice, carol);
      // Carol stops reading: what reaches her inbox stays there.
      await carol.mailbox.closeWhenRead();
      for (const [n, channelId] of [onA, onB, onA].entries()) {
        await say(net, alice, channelId, `m${n}`);
        await drained(net);
      }
      // Neither hub admitted three of its own, but the inbox holds three: the fourth is refused on either.
      const full = { code: 'inbox_full', message: `recipient '${carol.id}' inbox at capacity (3 >= 3)` };
      expect(await failure(say(net, alice, onB, 'm3'))).toEqual(full);
      expect(await failure(say(net, alice, onA, 'm3'))).toEqual(full);
    } finally {
      await b.close();
    }
  });

  it('limits and tasks hold across partitions that different hubs own', async () => {
    await using net = await openNet(nats.url, { partitions: P, leaseTtlMs: LEASE_TTL_MS });
    const b = await startPeerHub(net);
    try {
      const [heldA, heldB] = await settled([net.hub, b], 'both hubs to serve a share');
      const kA = heldA?.[0] ?? -1;
      const kB = heldB?.[0] ?? -1;
      const alice = await register(net, 'alice', { rule: { limits: { max_concurrent_channels: 2 } } });
      const bob = await register(net, 'bob');
      // Alice's two open channels are in partitions of different hubs: her third, anywhere, is refused.
      await conversationIn(net, kA, alice, bob);
      const second = await conversationIn(net, kB, alice, bob);
      const refused = async (k: number): Promise<{ code: string; message: string }> =>
        failure(
          net.rpc.call(
            'createChannel',
            { channel_id: idIn(k, P), type: CONVERSATION_TYPE, participants: [bob.id] },
            { caller: alice.id },
          ),
        );
      const expected = {
        code: 'access_denied',
        message: `creator '${alice.id}' exceeded max_concurrent_channels (2 >= 2)`,
      };
      await waitFor(async () => (await refused(kA)).code === 'access_denied', {
        what: "the channel index to show alice's channel of the other hub",
      });
      expect(await refused(kA)).toEqual(expected);
      expect(await refused(kB)).toEqual(expected);
      // A task in the channel of the hub that does not hold the home partition: its participant sees it, and it
      // expires once the channel ends.
      const home = held(net.hub).includes(0) ? net.hub : b;
      const channelId = held(home).includes(kB) ? await conversationIn(net, kA, bob, alice) : second;
      const taskId = newId();
      await net.rpc.call(
        'observeTask',
        { task: { task_id: taskId, owner_id: alice.id, channel_id: channelId, created_at: new Date().toISOString() } },
        { caller: alice.id },
      );
      const seen = await net.rpc.call('getTask', { task_id: taskId }, { caller: bob.id });
      expect([seen.task.task_id, seen.task.channel_id, seen.task.state]).toEqual([taskId, channelId, 'created']);
      await net.rpc.call('closeChannel', { channel_id: channelId }, { caller: alice.id });
      const ended = await waitFor(
        async () => {
          await home.tick();
          const { task } = await net.rpc.call('getTask', { task_id: taskId }, asOperator);
          return task.state === 'expired' ? task : undefined;
        },
        { what: 'the task of the ended channel to expire' },
      );
      expect([ended.state, ended.error]).toEqual(['expired', 'channel_closed']);
      // The operator revokes bob on the home partition's owner: the other hub refuses him too, once its copy of the
      // registry followed (a copy that stopped following would keep serving him).
      const elsewhere = home === net.hub ? kB : kA;
      // Bob opens it: alice is at her cap of two open channels when the closed one was bob's.
      const open = await conversationIn(net, elsewhere, bob, alice);
      await say(net, bob, open, 'still here');
      // The owner cancels a task in that channel, whose hub does not write the tasks: the home owner ends it.
      const cancelled = newId();
      await net.rpc.call(
        'observeTask',
        { task: { task_id: cancelled, owner_id: alice.id, channel_id: open, created_at: new Date().toISOString() } },
        { caller: alice.id },
      );
      await post(net, alice, {
        channel_id: open,
        event_type: EV_TASK_CANCELLED,
        event_data: { task_id: cancelled, reason: 'no longer needed' },
        task_id: cancelled,
      });
      const ended2 = await waitFor(
        async () => {
          await home.tick();
          const { task } = await net.rpc.call('getTask', { task_id: cancelled }, asOperator);
          return task.state === 'cancelled' ? task : undefined;
        },
        { what: 'the home owner to end the task cancelled in the other partition' },
      );
      expect([ended2.state, ended2.error]).toEqual(['cancelled', 'no longer needed']);
      await net.rpc.call('revokeIdentity', { name_or_id: bob.id }, asOperator);
      const refusedPost = await waitFor(
        async () => {
          const outcome = await failure(say(net, bob, open, 'after revocation')).catch(() => undefined);
          return outcome?.code === 'access_denied' ? outcome : undefined;
        },
        { what: "the other hub to refuse the revoked bob's post" },
      );
      expect(refusedPost).toEqual({ code: 'access_denied', message: `unknown caller '${bob.id}'` });
    } finally {
      await b.close();
    }
  });
});
