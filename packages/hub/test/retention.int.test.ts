/**
 * History retention: an ended channel's WAL entries, snapshots and indexes are removed once its retention ran out,
 * its record keeps a tombstone (`expired_at`), and reads of its history answer `not_found` with reason `expired`.
 */
import { startHub, type Logger } from '@ag2net/hub';
import { NetworkError, type Envelope, type HubResponse } from '@ag2net/protocol';
import { natsPerFile } from '@ag2net/test-support';
import { Kvm } from '@nats-io/kv';
import { jetstreamManager } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import {
  T0,
  asOperator,
  audit,
  drained,
  getChannel,
  openChannel,
  openNet,
  register,
  say,
  startColdHub,
  tickAfter,
  type TestAgent,
  type TestNet,
} from './support.js';

const nats = natsPerFile();

const HOUR = 3_600_000;

/** A logger that keeps the fields of every line, by message. */
function keptLines(): Logger & { readonly lines: { msg: string; fields: Record<string, unknown> }[] } {
  const lines: { msg: string; fields: Record<string, unknown> }[] = [];
  const keep = (obj: object, msg?: string): void => void lines.push({ msg: msg ?? '', fields: { ...obj } });
  const logger = { lines, debug: keep, info: keep, warn: keep, error: keep, child: () => logger };
  return logger;
}

/** How many messages the WAL holds on the channel's subject. */
async function walCount(net: TestNet, channelId: string): Promise<number> {
  const jsm = await jetstreamManager(net.nc);
  const subject = net.names.wal(channelId);
  const info = await jsm.streams.info(net.names.walStream, { subjects_filter: subject });
  return info.state.subjects?.[subject] ?? 0;
}

/** The keys of a bucket that name the channel. */
async function keysOf(net: TestNet, bucket: string, channelId: string): Promise<string[]> {
  const kv = await new Kvm(net.nc).open(bucket);
  const keys: string[] = [];
  for await (const key of await kv.keys()) if (key.includes(channelId)) keys.push(key);
  return keys.sort();
}

/** The channel's record in KV, as stored. */
async function storedRecord(net: TestNet, channelId: string): Promise<Record<string, unknown>> {
  const kv = await new Kvm(net.nc).open(net.names.channelsBucket);
  const entry = await kv.get(channelId);
  return entry === null ? {} : (JSON.parse(entry.string()) as Record<string, unknown>);
}

/** The operator's whole log of the channel, every page. */
async function wholeLog(net: TestNet, channelId: string): Promise<Envelope[]> {
  const out: Envelope[] = [];
  let since: number | null = 1;
  while (since !== null) {
    const page: HubResponse<'readWal'> = await net.rpc.call('readWal', { channel_id: channelId, since }, asOperator);
    out.push(...page.envelopes);
    since = page.next_since;
  }
  return out;
}

/** The wire error of a call that must fail, with its details. */
async function refusal(call: Promise<unknown>): Promise<{ code: string; message: string; details: unknown }> {
  try {
    await call;
  } catch (err) {
    if (err instanceof NetworkError) return { code: err.code, message: err.message, details: err.details };
    throw err;
  }
  throw new Error('expected the hub to refuse the call');
}

/** A conversation of `texts` texts between alice and bob, closed by alice and fanned out; returns its id. */
async function closedConversation(net: TestNet, alice: TestAgent, bob: TestAgent, texts: number): Promise<string> {
  const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
  for (let i = 0; i < texts; i += 1) await say(net, i % 2 === 0 ? alice : bob, cid, `text ${i}`);
  await net.rpc.call('closeChannel', { channel_id: cid }, { caller: alice.id });
  await drained(net);
  return cid;
}

/** What a read of the channel's history answers once it expired at `expiredAt`. */
function expired(channelId: string, expiredAt: string) {
  return {
    code: 'not_found',
    message: `the history of channel ${channelId} expired at ${expiredAt}`,
    details: { reason: 'expired', channel_id: channelId, expired_at: expiredAt },
  };
}

describe('history retention', () => {
  it('removes an ended channel’s WAL entries and snapshots after its retention, and leaves a tombstone', async () => {
    const logger = keptLines();
    await using net = await openNet(nats.url, { retainClosedMs: HOUR, logger });
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const open = (await openChannel(net, alice, 'conversation', [bob], { ttl: 0 })).channel_id;
    await say(net, alice, open, 'still talking');
    const cid = await closedConversation(net, alice, bob, 5);
    const closed = await getChannel(net, cid);
    expect(closed.closed_at).toBe(T0);
    const log = await wholeLog(net, cid);
    expect(log.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(await walCount(net, cid)).toBe(9);
    expect(await keysOf(net, net.names.snapshotsBucket, cid)).toEqual([`ended.${cid}`]);
    const openLog = await wholeLog(net, open);

    // One ms before the retention runs out nothing changes.
    await tickAfter(net, HOUR - 1);
    expect(await walCount(net, cid)).toBe(9);
    expect(await wholeLog(net, cid)).toEqual(log);
    expect(await getChannel(net, cid)).toEqual(closed);

    await tickAfter(net, 1);
    const expiredAt = '2026-01-01T01:00:00.000Z';
    expect(await walCount(net, cid)).toBe(0);
    expect(await keysOf(net, net.names.snapshotsBucket, cid)).toEqual([]);
    expect(await storedRecord(net, cid)).toEqual({ ...closed, expired_at: expiredAt });
    expect(await getChannel(net, cid)).toEqual({ ...closed, expired_at: expiredAt });
    expect(await getChannel(net, open)).not.toHaveProperty('expired_at');
    const listed = await net.rpc.call('listChannels', {}, { caller: bob.id });
    expect(listed.channels.map((c) => [c.channel_id, c.expired_at])).toEqual([
      [open, undefined],
      [cid, expiredAt],
    ]);
    expect(await audit(net, { kinds: ['channel_history_removed'] })).toEqual([
      {
        id: `channel_history_removed.${cid}`,
        kind: 'channel_history_removed',
        at: expiredAt,
        channel_id: cid,
        closed_at: T0,
        expired_at: expiredAt,
        purged: 9,
      },
    ]);
    expect(await refusal(net.rpc.call('readWal', { channel_id: cid }, asOperator))).toEqual(expired(cid, expiredAt));
    expect(await refusal(net.rpc.call('readWal', { channel_id: cid }, { caller: bob.id }))).toEqual(
      expired(cid, expiredAt),
    );
    expect(await refusal(net.rpc.call('adapterState', { channel_id: cid }, { caller: alice.id }))).toEqual(
      expired(cid, expiredAt),
    );
    // A post is refused as on any ended channel; a non-member learns nothing, as for a channel that does not exist.
    expect((await refusal(say(net, alice, cid, 'anyone?'))).code).toBe('protocol_error');
    const carol = await register(net, 'carol');
    expect(await refusal(net.rpc.call('readWal', { channel_id: cid }, { caller: carol.id }))).toEqual({
      code: 'not_found',
      message: `channel not found: ${cid}`,
      details: undefined,
    });
    expect(logger.lines.filter((l) => l.msg === 'channel history expired').map((l) => l.fields)).toEqual([
      expect.objectContaining({ channelId: cid, expiredAt, purged: 9 }),
    ]);

    // The open channel is never touched, however long it has been open (its silence is only audited meanwhile).
    await tickAfter(net, 10 * HOUR);
    const later = await wholeLog(net, open);
    expect(later.slice(0, openLog.length)).toEqual(openLog);
    expect(later.slice(openLog.length).map((e) => e.event_type)).toEqual(['ag2.expectation.violated']);
    expect(await walCount(net, open)).toBe(later.length);
    expect((await getChannel(net, open)).state).toBe('active');
  });

  it('a cold hub hydrates without the expired history and answers as the live hub did', async () => {
    const logger = keptLines();
    await using net = await openNet(nats.url, { retainClosedMs: HOUR, logger });
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = await closedConversation(net, alice, bob, 3);
    net.clock.advance(HOUR / 2);
    const kept = await closedConversation(net, alice, bob, 2);
    const keptLog = await wholeLog(net, kept);
    // An hour after `cid` ended, half an hour after `kept` did.
    await tickAfter(net, HOUR / 2);
    expect([await walCount(net, cid), await walCount(net, kept)]).toEqual([0, keptLog.length]);
    const live = structuredClone(net.hub.snapshot());
    await net.hub.close();

    const cold = await startColdHub(net);
    const hydrated = logger.lines.filter((l) => l.msg === 'hydrated').at(-1)?.fields;
    expect(hydrated).toMatchObject({
      channels: 2,
      open: 0,
      restored: 0,
      envelopes: 0,
      quarantined: 0,
      expiredHistories: 1,
    });
    expect(cold.snapshot()).toEqual(live);
    expect(await refusal(net.rpc.call('readWal', { channel_id: cid }, asOperator))).toEqual(
      expired(cid, '2026-01-01T01:00:00.000Z'),
    );
    expect(await wholeLog(net, kept)).toEqual(keptLog);
    expect((await getChannel(net, cid)).expired_at).toBe('2026-01-01T01:00:00.000Z');
    expect(await getChannel(net, kept)).not.toHaveProperty('expired_at');
    expect((await net.rpc.call('health', {})).quarantined).toBe(0);
  });

  it('a standby removes nothing; a removal cut short by a failover is completed by the next lease holder', async () => {
    await using net = await openNet(nats.url, { retainClosedMs: HOUR });
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const halfway = await closedConversation(net, alice, bob, 2);
    const nearlyDone = await closedConversation(net, alice, bob, 2);
    const standby = await startHub({
      servers: net.url,
      prefix: net.prefix,
      clock: net.clock,
      sweepIntervalMs: 0,
      retainClosedMs: HOUR,
      awaitActive: false,
    });
    try {
      net.clock.advance(HOUR);
      await standby.tick();
      expect([await walCount(net, halfway), await walCount(net, nearlyDone)]).toEqual([6, 6]);
    } finally {
      await standby.close();
    }
    await net.hub.close();

    // What a hub that died in the middle of its removals left: one channel's snapshot gone, the other's WAL too.
    const snapshots = await new Kvm(net.nc).open(net.names.snapshotsBucket);
    await snapshots.purge(`ended.${halfway}`);
    await snapshots.purge(`ended.${nearlyDone}`);
    const jsm = await jetstreamManager(net.nc);
    await jsm.streams.purge(net.names.walStream, { filter: net.names.wal(nearlyDone) });

    await startColdHub(net);
    const expiredAt = '2026-01-01T01:00:00.000Z';
    // Reads answer as for an expired history at once, before the removal completes and without quarantining anything.
    for (const cid of [halfway, nearlyDone]) {
      expect(await refusal(net.rpc.call('readWal', { channel_id: cid }, asOperator))).toEqual(expired(cid, expiredAt));
      expect((await getChannel(net, cid)).expired_at).toBe(expiredAt);
    }
    expect(await audit(net, { kinds: ['channel_history_removed'] })).toEqual([]);
    await net.hub.tick();
    for (const cid of [halfway, nearlyDone]) {
      expect(await walCount(net, cid)).toBe(0);
      expect(await keysOf(net, net.names.snapshotsBucket, cid)).toEqual([]);
      expect((await storedRecord(net, cid))['expired_at']).toBe(expiredAt);
    }
    expect((await net.rpc.call('health', {})).quarantined).toBe(0);
    // Each removal is audited with what its purge removed: all of one log, nothing of the other (purged already).
    const removed = await audit(net, { kinds: ['channel_history_removed'] });
    expect(removed.map((r) => [r['channel_id'], r['expired_at'], r['purged']])).toEqual([
      [halfway, expiredAt, 6],
      [nearlyDone, expiredAt, 0],
    ]);
    // Once more changes nothing: the removal is done.
    await tickAfter(net, HOUR);
    expect((await storedRecord(net, halfway))['expired_at']).toBe(expiredAt);
    expect(await audit(net, { kinds: ['channel_history_removed'] })).toHaveLength(2);
  });

  it('removes at most 16 histories a sweep, oldest first', async () => {
    await using net = await openNet(nats.url, { retainClosedMs: HOUR });
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const ended: string[] = [];
    for (let i = 0; i < 20; i += 1) {
      ended.push(await closedConversation(net, alice, bob, 0));
      net.clock.advance(1_000);
    }
    await tickAfter(net, HOUR);
    const tombstones = async (): Promise<boolean[]> =>
      Promise.all(ended.map(async (cid) => 'expired_at' in (await storedRecord(net, cid))));
    // All 20 are due: one sweep removes the 16 that ended first, the next one the rest.
    expect(await tombstones()).toEqual([...Array<boolean>(16).fill(true), ...Array<boolean>(4).fill(false)]);
    await tickAfter(net, 1);
    expect(await tombstones()).toEqual(Array<boolean>(20).fill(true));
    expect(await Promise.all(ended.map((cid) => walCount(net, cid)))).toEqual(Array<number>(20).fill(0));
  });
});
