import { WalHeader } from '@ag2net/protocol/internal';
import { EV_TEXT, newId, type Envelope } from '@ag2net/protocol';
import { natsPerFile } from '@ag2net/test-support';
import { Kvm } from '@nats-io/kv';
import { headers } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import type { Logger } from '@ag2net/hub';
import {
  audit,
  auditCount,
  openChannel,
  openNet,
  readWal,
  register,
  say,
  settle,
  startColdHub,
  type TestNet,
} from './support.js';

const nats = natsPerFile();

/** Publishes `data` straight to a WAL subject, with the hub's headers when given, as a foreign writer would. */
async function plant(
  net: TestNet,
  subject: string,
  data: string,
  hub: { epoch: string; sequence: string } | null,
): Promise<number> {
  const h = headers();
  if (hub !== null) {
    h.set(WalHeader.Epoch, hub.epoch);
    h.set(WalHeader.Sequence, hub.sequence);
  }
  return (await net.js.publish(subject, data, { headers: h })).seq;
}

/** A logger that keeps the fields of every `hydrated` line. */
function hydratedLines(): Logger & { readonly lines: object[] } {
  const lines: object[] = [];
  const keep = (obj: object, msg?: string): void => {
    if (msg === 'hydrated') lines.push(obj);
  };
  const logger = { lines, debug: keep, info: keep, warn: keep, error: keep, child: () => logger };
  return logger;
}

describe('hydrate over garbage', () => {
  it('quarantines every kind of foreign record, serves everything else, and folds exactly the clean state', async () => {
    const logger = hydratedLines();
    await using net = await openNet(nats.url, { logger });
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    await say(net, alice, cid, 'hi');
    net.clock.advance(1_000);
    await say(net, bob, cid, 'hello');
    await settle(net, cid);
    const wal = await readWal(net, alice, cid);
    const last = wal.at(-1);
    if (last === undefined) throw new Error('the channel has no log');
    const live = structuredClone(net.hub.snapshot());
    await net.hub.close();

    // WAL: not JSON, on a channel nobody created.
    const stranger = newId();
    await plant(net, net.names.wal(stranger), '{"oops', { epoch: '1', sequence: '1' });
    // WAL: a well-formed envelope on the open channel, but without the hub's headers.
    const forged: Envelope = { ...last, envelope_id: newId(), sequence: (last.sequence ?? 0) + 1 };
    await plant(net, net.names.wal(cid), JSON.stringify(forged), null);
    // WAL: the hub's headers, but a sequence the channel already has.
    const replayed: Envelope = { ...last, envelope_id: newId() };
    await plant(net, net.names.wal(cid), JSON.stringify(replayed), { epoch: '1', sequence: String(last.sequence) });
    // WAL: an envelope of the open channel on another channel's subject.
    await plant(net, net.names.wal(stranger), JSON.stringify({ ...forged, envelope_id: newId() }), {
      epoch: '1',
      sequence: String(forged.sequence),
    });
    // WAL: the hub's headers, a valid envelope whose event is not an envelope field set.
    const tail = await plant(net, net.names.wal(cid), JSON.stringify({ ...forged, event_type: 42 }), {
      epoch: '1',
      sequence: String(forged.sequence),
    });
    // KV: a passport that is not JSON, a passport of another id, a channel record that is no metadata, a task that
    // is not JSON.
    const kvm = new Kvm(net.nc);
    const agents = await kvm.open(net.names.agentsBucket);
    const ghost = newId();
    await agents.put(`${ghost}.passport`, '{not json');
    await agents.put(`${newId()}.passport`, JSON.stringify({ ...alice.passport, name: 'mallory' }));
    await (await kvm.open(net.names.channelsBucket)).put(newId(), JSON.stringify({ channel_id: 5 }));
    await (await kvm.open(net.names.tasksBucket)).put(`meta.${newId()}`, 'garbage');

    const cold = await startColdHub(net);
    expect(cold.role).toBe('active');
    // The hub's quarantine counter as hydrate left it (delivery, which starts after, may count what it skips too).
    // Hydrate reads only open channels' subjects: the two messages on the stranger's subject are not among them.
    expect(logger.lines.at(-1)).toMatchObject({ agents: 2, quarantined: 7 });
    // The clean fold, except that the channel's tail is where the foreign message left it (the next append checks it).
    expect(cold.snapshot()).toEqual({
      ...live,
      channels: live.channels.map((c) => (c.metadata.channel_id === cid ? { ...c, last_stream_seq: tail } : c)),
    });
    // What hydrate audited (the delivery consumer audits the stranger's messages when it reaches them).
    const quarantined = (await audit(net, { kinds: ['quarantined'] })).filter(
      (r) => r['key'] !== net.names.wal(stranger),
    );
    expect(quarantined.map((r) => r['source']).sort()).toEqual([
      'agents',
      'agents',
      'channels',
      'tasks',
      'wal',
      'wal',
      'wal',
    ]);

    expect(await net.rpc.call('health', {})).toMatchObject({ role: 'active', registered_agents: 2 });

    // The hub serves: the open channel takes the next turn with the next sequence.
    net.clock.advance(1_000);
    const next = await say(net, alice, cid, 'still here');
    expect(next.sequence).toBe((last.sequence ?? 0) + 1);
    expect((await readWal(net, alice, cid)).map((e) => e.event_type)).toEqual([
      ...wal.map((e) => e.event_type),
      EV_TEXT,
    ]);
  });

  it('planted foreign messages between the hub’s own entries: quarantined, audited, never delivered, state equals the clean fold', async () => {
    const logger = hydratedLines();
    await using net = await openNet(nats.url, { logger });
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    await say(net, alice, cid, 'hi');
    await settle(net, cid);
    const last = (await readWal(net, alice, cid)).at(-1);
    if (last === undefined) throw new Error('the channel has no log');
    const next = (last.sequence ?? 0) + 1;
    await net.hub.close();

    // Each breaks one rule of what the hub writes: the hub's headers, the envelope schema, the channel's sequence.
    const subject = net.names.wal(cid);
    const forged = (sequence: number): Envelope => ({ ...last, envelope_id: newId(), sequence });
    const planted = {
      noHeaders: forged(next),
      gap: forged(next + 1),
      headerMismatch: forged(next),
    };
    const seqs = [
      await plant(net, subject, JSON.stringify(planted.noHeaders), null),
      await plant(net, subject, JSON.stringify({ ...forged(next), event_type: 42 }), {
        epoch: '1',
        sequence: String(next),
      }),
      await plant(net, subject, JSON.stringify(planted.gap), { epoch: '1', sequence: String(next + 1) }),
      await plant(net, subject, JSON.stringify(planted.headerMismatch), { epoch: '1', sequence: String(next + 1) }),
    ];

    // A hub hydrates over them and appends after them: the foreign messages now sit between its own entries.
    await startColdHub(net);
    expect(logger.lines.at(-1)).toMatchObject({ quarantined: 4 });
    net.clock.advance(1_000);
    expect((await say(net, alice, cid, 'after')).sequence).toBe(next);
    expect((await say(net, bob, cid, 'again')).sequence).toBe(next + 1);
    await settle(net, cid);
    const live = structuredClone(net.hub.snapshot());
    await net.hub.close();

    // Without the channel's snapshot the next hub folds its whole log, through the foreign messages.
    await (await new Kvm(net.nc).open(net.names.snapshotsBucket)).purge(`open.${cid}`);
    await startColdHub(net);
    expect(logger.lines.at(-1)).toMatchObject({ quarantined: 4 });
    expect(net.hub.snapshot()).toEqual(live);

    // Audited once each (the same record id for the same message, whichever hub or path found it).
    const records = await audit(net, { kinds: ['quarantined'] });
    expect(records.map((r) => [r['source'], r['key'], r['seq']])).toEqual(seqs.map((seq) => ['wal', subject, seq]));
    // Neither a reader nor an inbox ever sees them.
    const ids = Object.values(planted).map((e) => e.envelope_id);
    expect((await readWal(net, bob, cid)).map((e) => e.envelope_id)).not.toContain(ids[0]);
    const barrier = await say(net, alice, cid, 'last');
    await bob.mailbox.waitFor((e) => e.envelope_id === barrier.envelope_id, 'the last text');
    expect(bob.mailbox.envelopes.filter((e) => ids.includes(e.envelope_id))).toEqual([]);
  });

  it('foreign messages planted while the hub serves: never delivered, audited, and the channel keeps its sequence', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    await say(net, alice, cid, 'hi');
    await settle(net, cid);
    const last = (await readWal(net, alice, cid)).at(-1);
    if (last === undefined) throw new Error('the channel has no log');
    const subject = net.names.wal(cid);
    const noHeaders: Envelope = { ...last, envelope_id: newId(), sequence: (last.sequence ?? 0) + 1 };
    const replayed: Envelope = { ...last, envelope_id: newId() };
    const seqs = [
      await plant(net, subject, JSON.stringify(noHeaders), null),
      await plant(net, subject, JSON.stringify(replayed), { epoch: '1', sequence: String(last.sequence) }),
    ];

    const records = await auditCount(net, { kinds: ['quarantined'] }, 2);
    expect(records.map((r) => [r['source'], r['key'], r['seq']])).toEqual(seqs.map((seq) => ['wal', subject, seq]));
    net.clock.advance(1_000);
    const next = await say(net, bob, cid, 'still in order');
    expect(next.sequence).toBe((last.sequence ?? 0) + 1);
    await alice.mailbox.waitFor((e) => e.envelope_id === next.envelope_id, 'the next text');
    const forged = [noHeaders.envelope_id, replayed.envelope_id];
    expect(
      [...alice.mailbox.envelopes, ...bob.mailbox.envelopes].filter((e) => forged.includes(e.envelope_id)),
    ).toEqual([]);
    expect((await readWal(net, alice, cid)).map((e) => e.envelope_id)).toEqual(expect.not.arrayContaining(forged));
    // Counted once each, though delivery and then the writer's catch-up before the next append both skipped them.
    expect(await net.rpc.call('health', {})).toMatchObject({ role: 'active', quarantined: 2 });
  });
});
