import { ALLOW, ruleBasedArbiter, type HubArbiter, type Logger } from '@ag2net/hub';
import { WalHeader } from '@ag2net/protocol/internal';
import { EV_CHANNEL_EXPIRED, EV_TEXT, EnvelopeSchema, hubNames, newId, type HubNames } from '@ag2net/protocol';
import { natsPerFile, uniqueName, waitFor } from '@ag2net/test-support';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect, headers } from '@nats-io/transport-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Lease } from '../src/lease/lease.js';
import { walMsgId } from '../src/nats/wal.js';
import {
  asOperator,
  failure,
  openChannel,
  openNet,
  rawFailure,
  readWal,
  register,
  say,
  settle,
  startColdHub,
  tickAfter,
  types,
  waitForState,
  at,
  type TestNet,
} from './support.js';

const nats = natsPerFile();

afterEach(() => {
  vi.restoreAllMocks();
});

/** A lease on a fresh bucket with `ttlMs`, driven by a manual monotonic clock. */
async function leaseBucket(url: string, ttlMs: number) {
  const nc = await connect({ servers: url });
  const names: HubNames = hubNames(uniqueName('lease'));
  const kv = await new Kvm(nc).create(names.leasesBucket, { ttl: ttlMs, history: 1 });
  const jsm = await jetstreamManager(nc);
  const clock = { now: 1_000 };
  const lease = (holder: string): Lease => new Lease({ kv, jsm, names, holderId: holder, now: () => clock.now });
  return { nc, names, jsm, clock, lease };
}

describe('the writer lease', () => {
  it('holds until the start of its last success plus the TTL minus 20 %, and renews from there', async () => {
    const { nc, clock, lease } = await leaseBucket(nats.url, 3_000);
    try {
      const a = lease('hub-a');
      const b = lease('hub-b');
      const epoch = await a.tryAcquire();
      expect(epoch).toBe(1);
      expect(await b.tryAcquire()).toBeNull();
      expect(a.deadline()).toBe(1_000 + 3_000 - 600);
      clock.now = 3_399;
      expect(a.holds()).toBe(true);
      clock.now = 3_400;
      expect(a.holds()).toBe(false);
      expect(await a.renew()).toBe('renewed');
      expect(a.deadline()).toBe(3_400 + 3_000 - 600);
      expect(a.holds()).toBe(true);
      expect(b.holds()).toBe(false);
    } finally {
      await nc.close();
    }
  });

  it('is lost only when its revision moved; a failed request is unknown and changes nothing', async () => {
    const { nc, names, jsm, lease } = await leaseBucket(nats.url, 3_000);
    const side = await connect({ servers: nats.url });
    try {
      const sideKv = await new Kvm(side).open(names.leasesBucket);
      const sideLease = new Lease({
        kv: sideKv,
        jsm: await jetstreamManager(side),
        names,
        holderId: 'hub-a',
        now: () => 1_000,
      });
      expect(await sideLease.tryAcquire()).toBe(1);
      await side.close();
      expect(await sideLease.renew()).toBe('unknown');
      expect(sideLease.holds()).toBe(true);

      // Someone else took the key over after it was purged: the holder learns it at its next renewal.
      await jsm.streams.purge(`KV_${names.leasesBucket}`, { filter: `$KV.${names.leasesBucket}.active` });
      const b = lease('hub-b');
      expect(await b.tryAcquire()).toBe(2);
      const a = lease('hub-a');
      expect(await a.renew()).toBe('lost');
      expect(await b.renew()).toBe('renewed');
      // A release is a write of its own (revision 4), which the next hub takes over at once.
      await b.release();
      expect(b.holds()).toBe(false);
      expect(await b.renew()).toBe('lost');
      expect(await lease('hub-c').tryAcquire()).toBe(5);
    } finally {
      await nc.close();
    }
  });
});

describe('the writer lease when a connection closes', () => {
  it('a suspended lease holds nothing until a renewal sent after the suspension succeeds', async () => {
    const { nc, clock, lease } = await leaseBucket(nats.url, 3_000);
    try {
      const a = lease('hub-a');
      expect(await a.tryAcquire()).toBe(1);
      a.suspend();
      expect([a.holds(), a.suspended(), a.renewable()]).toEqual([false, true, true]);
      // A renewal that started in the same instant as the suspension proves nothing about the time after it.
      expect(await a.renew()).toBe('renewed');
      expect(a.holds()).toBe(false);
      clock.now += 1;
      expect(await a.renew()).toBe('renewed');
      expect([a.holds(), a.suspended()]).toEqual([true, false]);
    } finally {
      await nc.close();
    }
  });

  it('a standby takes over by CAS on the revision it saw; the suspended holder then loses at its renewal', async () => {
    const { nc, lease } = await leaseBucket(nats.url, 3_000);
    try {
      const a = lease('hub-a');
      const b = lease('hub-b');
      expect(await a.tryAcquire()).toBe(1);
      expect(await b.tryAcquire()).toBeNull();
      const seen = b.observedHolder();
      expect(seen).toEqual({ hubId: 'hub-a', revision: 1 });
      // The holder renewed after the standby read the key: the take-over fails and nothing changes.
      expect(await a.renew()).toBe('renewed');
      expect(await b.takeOver(seen ?? { hubId: '', revision: 0 })).toBeNull();
      expect(a.holds()).toBe(true);

      expect(await b.tryAcquire()).toBeNull();
      expect(b.observedHolder()).toEqual({ hubId: 'hub-a', revision: 2 });
      a.suspend();
      expect(await b.takeOver({ hubId: 'hub-a', revision: 2 })).toBe(3);
      expect(b.holds()).toBe(true);
      expect(await a.renew()).toBe('lost');
      expect([a.holds(), a.suspended()]).toEqual([false, false]);
    } finally {
      await nc.close();
    }
  });
});

describe('the writer lease across terms', () => {
  it('ignores a renewal that answers after its term ended', async () => {
    const { nc, clock, lease } = await leaseBucket(nats.url, 3_000);
    try {
      const a = lease('hub-a');
      expect(await a.tryAcquire()).toBe(1);
      const late = a.renew();
      // The release waits for the renewal in flight (revision 2) and releases after it (revision 3).
      await a.release();
      clock.now = 2_000;
      expect(await a.tryAcquire()).toBe(4);
      expect(await late).toBe('lost');
      expect(a.holds()).toBe(true);
      expect(a.deadline()).toBe(2_000 + 3_000 - 600);
      expect(await a.renew()).toBe('renewed');
    } finally {
      await nc.close();
    }
  });
});

/** The answer to a request a hub admits past its lease. */
const LEASE_LAPSED = { code: 'unavailable', message: 'this hub no longer holds the writer lease; retry' };

/**
 * Moves the hub's monotonic clock an hour ahead (past its lease deadline, as after a pause), lets a request held in
 * admission go (`release`) and returns its refusal; the clock is back afterwards.
 */
async function refusedPastTheLease<T>(release: () => void, refused: Promise<T>): Promise<T> {
  const realNow = performance.now.bind(performance);
  const spy = vi.spyOn(performance, 'now').mockImplementation(() => realNow() + 3_600_000);
  try {
    release();
    return await refused;
  } finally {
    spy.mockRestore();
  }
}

/** An arbiter that holds sends of the text `hold`, and the channels `straddler` opens, until the test lets them go. */
function gatedArbiter() {
  let entered: () => void = () => undefined;
  let release: () => void = () => undefined;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  const gate = new Promise<void>((resolve) => (release = resolve));
  const arbiter: HubArbiter = {
    ...ruleBasedArbiter,
    async authorizeSend(check) {
      if (check.envelope.event_data.text !== 'hold') return ruleBasedArbiter.authorizeSend(check);
      entered();
      await gate;
      return ALLOW;
    },
    async authorizeChannelOpen(check) {
      const decision = await ruleBasedArbiter.authorizeChannelOpen(check);
      if (check.creator.passport.name !== 'straddler') return decision;
      entered();
      await gate;
      return decision;
    },
  };
  return { arbiter, inside, release };
}

/** Warnings the hub logged, by message. */
function capturingLogger(): { logger: Logger; warnings: { obj: object; msg: string | undefined }[] } {
  const warnings: { obj: object; msg: string | undefined }[] = [];
  const logger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (obj, msg) => warnings.push({ obj, msg }),
    error: () => undefined,
    child: () => logger,
  };
  return { logger, warnings };
}

async function conversation(net: TestNet) {
  const alice = await register(net, 'alice');
  const bob = await register(net, 'bob');
  const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
  return { alice, bob, cid };
}

describe('fencing', () => {
  it('refuses to append with unavailable once its lease lapsed, and serves again after it holds one', async () => {
    const { arbiter, inside, release } = gatedArbiter();
    await using net = await openNet(nats.url, { arbiter });
    const { alice, cid } = await conversation(net);
    await say(net, alice, cid, 'before');
    const before = await readWal(net, alice, cid);

    const envelope = { channel_id: cid, sender_id: alice.id, event_type: EV_TEXT, event_data: { text: 'hold' } };
    const refused = rawFailure(net, net.names.rpc('post', alice.id), JSON.stringify(envelope));
    await inside;
    // The hub is now past its lease deadline by its own clock (as after a pause), with the post in admission.
    expect(await refusedPastTheLease(release, refused)).toEqual(LEASE_LAPSED);

    // The hub stepped down; it serves again once it holds the lease anew, which may take the old lease's TTL and a
    // campaign, longer than one call's retries.
    await waitFor(async () => (await net.rpc.call('health', {})).role === 'active', {
      timeoutMs: 30_000,
      what: 'the hub to hold the lease again',
    });
    expect(await readWal(net, alice, cid)).toEqual(before);
    const next = await say(net, alice, cid, 'after');
    expect(next.sequence).toBe(before.length + 1);
  });

  it('a lapse that a renewal ends keeps the term and its epoch, and the hub serves on', async () => {
    const lines: string[] = [];
    const logger: Logger = {
      debug: () => undefined,
      info: (_obj, msg) => void lines.push(msg ?? ''),
      warn: (_obj, msg) => void lines.push(msg ?? ''),
      error: (_obj, msg) => void lines.push(msg ?? ''),
      child: () => logger,
    };
    // The default lease (6 s): renewals every 1 s, valid for 4.8 s after one began, renewable until 6 s after.
    await using net = await openNet(nats.url, { logger, leaseTtlMs: 6_000 });
    const { alice, cid } = await conversation(net);
    const before = await readWal(net, alice, cid);
    const epoch = net.hub.epoch;
    // The hub's clock jumps 4.86 s ahead (as after a pause, or a NATS outage with no renewal): 4.86 to 5.86 s after
    // its last renewal began, so the lease has lapsed but the server cannot have expired the key.
    const realNow = performance.now.bind(performance);
    const spy = vi.spyOn(performance, 'now').mockImplementation(() => realNow() + 4_860);
    try {
      await waitFor(() => lines.includes('lease renewed after a lapse; serving again'), {
        timeoutMs: 10_000,
        what: 'the lapse to be renewed',
      });
    } finally {
      spy.mockRestore();
    }
    expect(lines.filter((l) => l.startsWith('lease'))).toEqual([
      'lease acquired; hydrating',
      'lease lapsed; serving nothing while it is renewed',
      'lease renewed after a lapse; serving again',
    ]);
    expect([net.hub.role, net.hub.epoch]).toEqual(['active', epoch]);
    expect((await say(net, alice, cid, 'after the lapse')).sequence).toBe(before.length + 1);
  });

  it('a channel creation that straddles the lease loss answers unavailable, writes nothing, and its retry opens it', async () => {
    const { arbiter, inside, release } = gatedArbiter();
    await using net = await openNet(nats.url, { arbiter });
    const alice = await register(net, 'straddler');
    const bob = await register(net, 'bob');
    const cid = newId();
    const create = { type: 'conversation', participants: [bob.id], channel_id: cid };
    const refused = rawFailure(net, net.names.rpc('createChannel', alice.id), JSON.stringify(create));
    await inside;
    // The hub is past its lease deadline by its own clock (as after a pause) while the creation is in admission.
    expect(await refusedPastTheLease(release, refused)).toEqual(LEASE_LAPSED);
    const channels = await new Kvm(net.nc).open(net.names.channelsBucket);
    expect(await channels.get(cid)).toBeNull();
    const jsm = await jetstreamManager(net.nc);
    expect(await jsm.streams.getMessage(net.names.walStream, { last_by_subj: net.names.wal(cid) })).toBeNull();

    await waitFor(async () => (await net.rpc.call('health', {})).role === 'active', {
      timeoutMs: 30_000,
      what: 'the hub to hold the lease again',
    });
    const retried = await openChannel(net, alice, 'conversation', [bob], { channel_id: cid });
    expect(retried).toMatchObject({ channel_id: cid, state: 'active', close_reason: '' });
  });

  it('folds an entry a deposed writer appended at the tail, and the next post takes the next sequence', async () => {
    const { logger, warnings } = capturingLogger();
    await using net = await openNet(nats.url, { logger });
    const { alice, bob, cid } = await conversation(net);
    // The first hub hands over to a second one: the first one's epoch is now the old one.
    const oldEpoch = net.hub.epoch;
    await net.hub.close();
    await startColdHub(net);
    await net.hub.whenActive();
    expect(net.hub.epoch).toBeGreaterThan(oldEpoch);
    await say(net, alice, cid, 'one');
    await say(net, bob, cid, 'two');
    const jsm = await jetstreamManager(net.nc);
    const tail = await jsm.streams.getMessage(net.names.walStream, { last_by_subj: net.names.wal(cid) });
    if (tail === null) throw new Error('the channel has no tail');
    const last = EnvelopeSchema.parse(JSON.parse(tail.string()));
    const lastSequence = last.sequence ?? 0;

    // What a deposed hub that woke from a pause writes: a valid envelope under its old epoch, after the true tail.
    const foreign = {
      ...last,
      envelope_id: newId(),
      sender_id: bob.id,
      event_data: { text: 'from the deposed hub' },
      sequence: lastSequence + 1,
    };
    const h = headers();
    h.set(WalHeader.Epoch, String(oldEpoch));
    h.set(WalHeader.Sequence, String(lastSequence + 1));
    const foreignAck = await net.js.publish(net.names.wal(cid), JSON.stringify(foreign), {
      msgID: walMsgId(foreign),
      expect: { lastSubjectSequence: tail.seq },
      headers: h,
    });

    const next = await say(net, alice, cid, 'three');
    expect(next.sequence).toBe(lastSequence + 2);
    const log = await readWal(net, alice, cid);
    expect(log.map((e) => e.sequence)).toEqual(log.map((_, i) => i + 1));
    expect(log.slice(-2).map((e) => [e.sender_id, e.event_data])).toEqual([
      [bob.id, { text: 'from the deposed hub' }],
      [alice.id, { text: 'three' }],
    ]);
    expect(warnings.filter((w) => w.msg === 'folded an entry another writer appended')).toEqual([
      {
        msg: 'folded an entry another writer appended',
        obj: {
          channel: 'conversation',
          channelId: cid,
          streamSeq: foreignAck.seq,
          epoch: oldEpoch,
          ownEpoch: net.hub.epoch,
        },
      },
    ]);

    // Live state is the fold: a hub hydrated cold from the same log has the same state.
    const live = net.hub.snapshot();
    await net.hub.close();
    await startColdHub(net);
    await net.hub.whenActive();
    expect(net.hub.snapshot()).toEqual(live);
  });

  it('acks a post that a deposed writer already appended, once, with its stored sequence', async () => {
    await using net = await openNet(nats.url);
    const { alice, cid } = await conversation(net);
    await say(net, alice, cid, 'one');
    const oldEpoch = net.hub.epoch;
    await net.hub.close();
    await startColdHub(net);
    await net.hub.whenActive();
    const jsm = await jetstreamManager(net.nc);
    const tail = await jsm.streams.getMessage(net.names.walStream, { last_by_subj: net.names.wal(cid) });
    if (tail === null) throw new Error('the channel has no tail');
    const last = EnvelopeSchema.parse(JSON.parse(tail.string()));
    const sequence = (last.sequence ?? 0) + 1;
    // The deposed hub admitted alice's post and acked it; its answer was lost, so alice retries at the active hub.
    const id = newId();
    const admitted = { ...last, envelope_id: id, sender_id: alice.id, event_data: { text: 'retried' }, sequence };
    const h = headers();
    h.set(WalHeader.Epoch, String(oldEpoch));
    h.set(WalHeader.Sequence, String(sequence));
    await net.js.publish(net.names.wal(cid), JSON.stringify(admitted), {
      msgID: walMsgId(admitted),
      expect: { lastSubjectSequence: tail.seq },
      headers: h,
    });

    const retry = await say(net, alice, cid, 'retried', { envelope_id: id });
    expect(retry).toEqual({ envelope_id: id, sequence, created_at: last.created_at });
    expect((await readWal(net, alice, cid)).filter((e) => e.envelope_id === id)).toHaveLength(1);
    expect((await say(net, alice, cid, 'next')).sequence).toBe(sequence + 1);
  });

  it('writes no second close when a deposed writer already ended the channel', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob } = await conversation(net);
    const cid = (await openChannel(net, alice, 'conversation', [bob], { ttl: '60s' })).channel_id;
    await settle(net, cid);
    const jsm = await jetstreamManager(net.nc);
    const tail = await jsm.streams.getMessage(net.names.walStream, { last_by_subj: net.names.wal(cid) });
    if (tail === null) throw new Error('the channel has no tail');
    const last = EnvelopeSchema.parse(JSON.parse(tail.string()));
    const sequence = (last.sequence ?? 0) + 1;
    // The deposed hub's sweep expired the channel (and its answer never reached this hub's memory).
    const expired = {
      ...last,
      envelope_id: newId(),
      event_type: EV_CHANNEL_EXPIRED,
      event_data: { reason: 'ttl_expired', channel_id: cid },
      created_at: at(60_000),
      sequence,
    };
    const h = headers();
    h.set(WalHeader.Epoch, String(net.hub.epoch));
    h.set(WalHeader.Sequence, String(sequence));
    await net.js.publish(net.names.wal(cid), JSON.stringify(expired), {
      msgID: walMsgId(expired),
      expect: { lastSubjectSequence: tail.seq },
      headers: h,
    });

    await tickAfter(net, 60_000);
    expect(await waitForState(net, cid, 'expired')).toMatchObject({
      close_reason: 'ttl_expired',
      closed_at: at(60_000),
    });
    const log = await readWal(net, alice, cid);
    expect(types(log).filter((t) => t === EV_CHANNEL_EXPIRED)).toHaveLength(1);
    expect(log.at(-1)?.envelope_id).toBe(expired.envelope_id);

    const live = net.hub.snapshot();
    await net.hub.close();
    await startColdHub(net);
    await net.hub.whenActive();
    expect(net.hub.snapshot()).toEqual(live);
  });

  it('refuses a non-participant with AG2’s ProtocolError, whatever its event and whoever’s turn it is, never admitting it', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const erin = await register(net, 'erin');
    const dave = await register(net, 'dave');
    const conv = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    const disc = (await openChannel(net, alice, 'discussion', [bob, erin])).channel_id;
    const refused = (message: string) => ({ code: 'protocol_error', message });

    expect(await failure(say(net, dave, conv, 'let me in'))).toEqual(
      refused(`conversation channel '${conv}' only accepts sends from participants, got '${dave.id}'`),
    );
    const custom = { event_type: 'acme.note', event_data: { note: 'x' } };
    expect(await failure(say(net, dave, conv, 'custom', custom))).toEqual(
      refused(`channel '${conv}' only accepts sends from participants, got '${dave.id}'`),
    );
    expect((await net.rpc.call('adapterState', { channel_id: disc }, asOperator)).state?.expected_next_speaker).toBe(
      alice.id,
    );
    expect(await failure(say(net, dave, disc, 'my turn?'))).toEqual(
      refused(`discussion channel '${disc}' expects '${alice.id}' to speak, got '${dave.id}'`),
    );
    expect((await readWal(net, alice, conv)).map((e) => e.sender_id)).not.toContain(dave.id);
  });
});
