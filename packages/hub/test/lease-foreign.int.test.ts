/**
 * The lease trusts no write to its key that is not a hub's. Foreign values (a JetStream API answer, an RPC reply a
 * confused deputy sent to the key's subject) are written over by a live holder, keep no standby out for longer than a
 * lease time once the holder is gone, and never let a standby in while the holder lives. A graceful stop releases the
 * lease without a purge, and the standby takes over at once.
 */
import { startHub, type HubOptions } from '@ag2net/hub';
import { hubNames, type HubNames, type HubResponse } from '@ag2net/protocol';
import { natsPerFile, uniqueName, waitFor, within } from '@ag2net/test-support';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Lease } from '../src/lease/lease.js';
import {
  INVITE_ACK_TIMEOUT_MS,
  audit,
  oneTo,
  openChannel,
  openNet,
  readWal,
  register,
  say,
  sequences,
  type TestAgent,
  type TestNet,
} from './support.js';

const nats = natsPerFile();

/** Values no hub writes, as replies a confused deputy sent to the lease key's subject would leave there. */
const FOREIGN = [
  JSON.stringify({ type: 'io.nats.jetstream.api.v1.stream_info_response', error: { code: 404, err_code: 10059 } }),
  JSON.stringify({ ok: true, result: { hub_id: 'hub-a', role: 'active', epoch: 1 } }),
  JSON.stringify({ hub_id: 'hub-a', state: 'released' }),
  '',
];

/** A lease bucket of its own with a long TTL, and leases on it driven by a manual monotonic clock. */
async function leaseBucket(ttlMs = 60_000) {
  const nc = await connect({ servers: nats.url });
  const names: HubNames = hubNames(uniqueName('lease'));
  const kv = await new Kvm(nc).create(names.leasesBucket, { ttl: ttlMs, history: 1 });
  const jsm = await jetstreamManager(nc);
  const clock = { now: 1_000 };
  const foreign: { key: string; revision: number }[] = [];
  const lease = (holder: string): Lease =>
    new Lease({ kv, jsm, names, holderId: holder, now: () => clock.now, onForeign: (f) => void foreign.push(f) });
  const key = `$KV.${names.leasesBucket}.active`;
  /** Publishes `data` on the key's subject as anyone could; its revision. */
  const plant = async (data: string): Promise<number> => (await jetstream(nc).publish(key, data)).seq;
  return { nc, kv, clock, lease, plant, foreign, key, ttlMs, [Symbol.asyncDispose]: () => nc.close() };
}

describe('the lease and foreign values at its key', () => {
  it('a holder writes its record over a foreign value while valid, same term and epoch, and reports it once', async () => {
    await using b = await leaseBucket();
    const a = b.lease('hub-a');
    const standby = b.lease('hub-b');
    expect(await a.tryAcquire()).toBe(1);
    const foreign = await b.plant(FOREIGN[0] ?? '');
    b.clock.now = 2_000;
    expect(await a.renew()).toBe('renewed');
    const entry = await b.kv.get('active');
    expect([entry?.revision, entry?.string()]).toEqual([3, 'hub-a']);
    expect(a.deadline()).toBe(2_000 + 60_000 - 12_000);
    expect(b.foreign).toEqual([{ key: b.key, revision: foreign }]);
    expect(await standby.tryAcquire()).toBeNull();
    expect(await a.renew()).toBe('renewed');
    expect(b.foreign).toHaveLength(1);
  });

  it('a holder whose lease lapsed by its own clock does not take the key back from a foreign value', async () => {
    await using b = await leaseBucket();
    const a = b.lease('hub-a');
    expect(await a.tryAcquire()).toBe(1);
    await b.plant(FOREIGN[1] ?? '');
    b.clock.now = 1_000 + 48_000;
    expect(await a.renew()).toBe('lost');
    expect((await b.kv.get('active'))?.revision).toBe(2);
  });

  it('a standby takes a foreign key over only after a whole lease time of foreign values, seen one after another', async () => {
    await using b = await leaseBucket();
    const a = b.lease('hub-a');
    const standby = b.lease('hub-b');
    expect(await a.tryAcquire()).toBe(1);
    // The holder is gone; foreign values keep the key from expiring.
    for (const data of FOREIGN) await b.plant(data);
    b.clock.now = 2_000;
    expect(await standby.tryAcquire()).toBeNull();
    await b.plant(FOREIGN[0] ?? '');
    b.clock.now = 2_000 + b.ttlMs - 1;
    expect(await standby.tryAcquire()).toBeNull();
    await b.plant(FOREIGN[1] ?? '');
    b.clock.now = 2_000 + b.ttlMs;
    expect(await standby.tryAcquire()).toBe(8);
    expect((await b.kv.get('active'))?.string()).toBe('hub-b');
    expect(await a.renew()).toBe('lost');
    expect(b.foreign.map((f) => f.revision)).toEqual([5, 6, 7]);
  });

  it('a holder’s record between two foreign values starts the standby’s wait again, also when it never saw it', async () => {
    await using b = await leaseBucket();
    const a = b.lease('hub-a');
    const standby = b.lease('hub-b');
    expect(await a.tryAcquire()).toBe(1);
    await b.plant(FOREIGN[0] ?? '');
    expect(await standby.tryAcquire()).toBeNull();
    // The holder writes over it (revision 3) and another foreign value hides that at once.
    b.clock.now = 40_000;
    expect(await a.renew()).toBe('renewed');
    await b.plant(FOREIGN[1] ?? '');
    // A whole lease time after the standby first saw a foreign value, it finds revision 3 gone: it waits again.
    b.clock.now = 1_000 + b.ttlMs;
    expect(await standby.tryAcquire()).toBeNull();
    // The holder writes over it again, and this time the standby reads its record.
    b.clock.now = 80_000;
    expect(await a.renew()).toBe('renewed');
    expect(await standby.tryAcquire()).toBeNull();
    // From here on the holder is silent (its lease ends at 80 000 + 48 000 by its clock): a whole lease time of
    // foreign values from the first one the standby sees lets it in.
    await b.plant(FOREIGN[2] ?? '');
    b.clock.now = 80_001;
    expect(await standby.tryAcquire()).toBeNull();
    b.clock.now = 80_001 + b.ttlMs - 1;
    expect(await standby.tryAcquire()).toBeNull();
    b.clock.now = 80_001 + b.ttlMs;
    expect(await standby.tryAcquire()).toBe(7);
    expect(await a.renew()).toBe('lost');
  });

  it('other keys of the bucket written between two foreign values do not start the wait again', async () => {
    await using b = await leaseBucket();
    const standby = b.lease('hub-b');
    await b.plant(FOREIGN[0] ?? '');
    expect(await standby.tryAcquire()).toBeNull();
    await b.kv.put('elsewhere', 'x');
    await b.plant(FOREIGN[1] ?? '');
    b.clock.now += b.ttlMs;
    expect(await standby.tryAcquire()).toBe(4);
  });

  it('a release is a delete marker carrying the hub’s record, taken over at once; a bare delete marker is foreign', async () => {
    await using b = await leaseBucket();
    const a = b.lease('hub-a');
    const standby = b.lease('hub-b');
    expect(await a.tryAcquire()).toBe(1);
    await a.release();
    const released = await b.kv.get('active');
    expect([released?.operation, released?.revision]).toEqual(['DEL', 2]);
    expect(await standby.tryAcquire()).toBe(3);
    // A hub of an older version acquires with `kv.create`, which takes a delete marker as free as well.
    await standby.release();
    expect(await b.kv.create('active', 'old-hub')).toBe(5);
    // Held by a hub of an older version: its plain id is a hub's record.
    expect(await a.tryAcquire()).toBeNull();

    await b.kv.delete('active');
    expect(await a.tryAcquire()).toBeNull();
    expect(b.foreign.map((f) => f.revision)).toEqual([6]);
  });
});

/** Options of the two hubs of one prefix: a short lease, the net's clock, no sweeper timer. */
function pairOptions(net: TestNet, ttlMs: number, hubId: string): HubOptions {
  return {
    prefix: net.prefix,
    hubId,
    clock: net.clock,
    leaseTtlMs: ttlMs,
    sweepIntervalMs: 0,
    inviteAckTimeoutMs: INVITE_ACK_TIMEOUT_MS,
  };
}

/**
 * Two hubs on the net's prefix, `first` serving on a connection of its own (closing it kills the hub: nothing it would
 * still write reaches NATS) and `second` a standby. Every `$JS.API.STREAM.PURGE` request on the prefix's lease bucket
 * is counted.
 */
async function twoHubs(net: TestNet, ttlMs: number) {
  await net.hub.close();
  const connection = await connect({ servers: net.url });
  const first = await startHub({ ...pairOptions(net, ttlMs, 'first'), connection });
  const second = await startHub({ ...pairOptions(net, ttlMs, 'second'), servers: net.url, awaitActive: false });
  net.hub = first;
  let secondActiveAt: number | null = null;
  void second.whenActive().then(() => (secondActiveAt = performance.now()));
  const purges = net.nc.subscribe(`$JS.API.STREAM.PURGE.KV_${net.names.leasesBucket}`);
  await net.nc.flush();
  return {
    first,
    second,
    connection,
    secondActiveAt: () => secondActiveAt,
    purges: () => purges.getReceived(),
    async [Symbol.asyncDispose]() {
      purges.unsubscribe();
      await Promise.all([first.close(), second.close()]);
      if (!connection.isClosed()) await connection.close();
    },
  };
}

/** Writes a foreign value at the lease key every `everyMs` until stopped; the revisions it wrote. */
function foreignWriter(nc: NatsConnection, net: TestNet, everyMs: number) {
  const revisions: number[] = [];
  let stopped = false;
  const js = jetstream(nc);
  const loop = (async () => {
    for (let i = 0; !stopped; i += 1) {
      const ack = await js.publish(`$KV.${net.names.leasesBucket}.active`, FOREIGN[i % 2] ?? '');
      revisions.push(ack.seq);
      await sleep(everyMs);
    }
  })();
  return {
    revisions,
    async stop(): Promise<void> {
      stopped = true;
      await loop;
    },
  };
}

async function conversation(net: TestNet) {
  const alice = await register(net, 'alice');
  const bob = await register(net, 'bob');
  const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
  return { alice, bob, cid };
}

/** Posts one text after another until `until` says stop; every acked envelope. */
async function keepPosting(net: TestNet, agents: readonly TestAgent[], cid: string, until: () => boolean) {
  const acked: HubResponse<'post'>[] = [];
  for (let i = 0; !until(); i += 1) {
    net.clock.advance(100);
    const sender = agents[i % agents.length];
    if (sender === undefined) throw new Error('no sender');
    acked.push(await say(net, sender, cid, `turn ${i}`));
    await sleep(100);
  }
  return acked;
}

describe('two hubs and foreign writes to the lease key', () => {
  const TTL_MS = 1_500;

  it('the active hub keeps serving under foreign writes, the standby stays out, and takes over once the active hub dies', async () => {
    await using net = await openNet(nats.url, { leaseTtlMs: TTL_MS });
    const { alice, bob, cid } = await conversation(net);
    await using hubs = await twoHubs(net, TTL_MS);
    const epoch = hubs.first.epoch;
    const before = (await readWal(net, alice, cid)).length;

    // Three lease times of a foreign value every third of one, while posts go on.
    const writer = foreignWriter(net.nc, net, TTL_MS / 3);
    const end = performance.now() + 3 * TTL_MS;
    const acked = await keepPosting(net, [alice, bob], cid, () => performance.now() >= end);
    expect(hubs.first.role).toBe('active');
    expect(hubs.first.epoch).toBe(epoch);
    expect(hubs.second.role).toBe('standby');
    expect(hubs.secondActiveAt()).toBeNull();
    expect(acked.length).toBeGreaterThan(5);
    expect(acked.map((a) => a.sequence)).toEqual(oneTo(acked.length).map((i) => before + i));
    // Each foreign value the two hubs met is counted and audited once, naming the key.
    const records = (await audit(net, { kinds: ['quarantined'] })).filter((r) => r['source'] === 'leases');
    expect(records.length).toBeGreaterThan(0);
    for (const r of records) {
      expect(r['key']).toBe(`$KV.${net.names.leasesBucket}.active`);
      expect(writer.revisions).toContain(r['seq']);
    }
    expect(hubs.first.health().quarantined).toBeGreaterThan(0);

    // The active hub dies while the foreign writes go on: the standby waits out a lease time of them, then serves.
    const killedAt = performance.now();
    await hubs.connection.close();
    await waitFor(() => hubs.secondActiveAt() !== null, { what: 'the standby to serve', timeoutMs: 5 * TTL_MS });
    const takeoverMs = (hubs.secondActiveAt() ?? 0) - killedAt;
    await writer.stop();
    // Never before the dead hub's lease could have ended by its own clock (80 % of a lease after its last renewal,
    // which was at most a sixth of a lease before it died).
    expect(takeoverMs).toBeGreaterThan(TTL_MS * (0.8 - 1 / 6));
    expect(hubs.second.epoch).toBeGreaterThan(epoch);

    net.hub = hubs.second;
    const after = await say(net, alice, cid, 'on the new hub');
    const wal = await readWal(net, alice, cid);
    expect(sequences(wal)).toEqual(oneTo(before + acked.length + 1));
    expect(wal.slice(before).map((e) => e.envelope_id)).toEqual([...acked, after].map((e) => e.envelope_id));
    expect(hubs.purges()).toBe(0);
  });

  it('a graceful stop of the active hub lets the standby take over at once, without a purge', async () => {
    const ttlMs = 6_000;
    await using net = await openNet(nats.url, { leaseTtlMs: ttlMs });
    const { alice, cid } = await conversation(net);
    await using hubs = await twoHubs(net, ttlMs);
    const epoch = hubs.first.epoch;
    const before = await say(net, alice, cid, 'before');

    const closedAt = performance.now();
    await hubs.first.close();
    await within(hubs.second.whenActive(), ttlMs, 'the standby to serve');
    // Without the release the standby would have waited until the lease expired, most of a lease time.
    expect((hubs.secondActiveAt() ?? Infinity) - closedAt).toBeLessThan(ttlMs / 2);
    expect(hubs.second.epoch).toBeGreaterThan(epoch);
    expect(hubs.purges()).toBe(0);
    net.hub = hubs.second;
    expect((await say(net, alice, cid, 'after')).sequence).toBe((before.sequence ?? 0) + 1);
  });
});
