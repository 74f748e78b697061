/**
 * Records the hub did not write, published straight onto a live channel's WAL subject (as a reply a confused deputy
 * sent there would be): the next append quarantines them (counted, audited once each, never folded, no sequence) and
 * goes after them, and a hub hydrating the same WAL cold ends in the live state.
 */
import { ALLOW, ruleBasedArbiter, type HubArbiter } from '@ag2net/hub';
import { WalHeader } from '@ag2net/protocol/internal';
import { EV_TEXT, newId, type Envelope, type HubResponse } from '@ag2net/protocol';
import { natsPerFile } from '@ag2net/test-support';
import { headers } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { MAX_SKIPS_PER_APPEND } from '../src/operations/append.js';
import {
  audit,
  auditCount,
  oneTo,
  openChannel,
  openNet,
  rawFailure,
  readWal,
  register,
  say,
  sequences,
  settle,
  startColdHub,
  type TestAgent,
  type TestNet,
} from './support.js';

const nats = natsPerFile();

/** A foreign record: its body, and the hub's headers it claims (none when `null`). */
interface Foreign {
  readonly data: string;
  readonly hub: { readonly epoch: string; readonly sequence: string } | null;
}

/** Publishes a foreign record straight onto a WAL subject with a plain JetStream publish; its stream sequence. */
async function plant(net: TestNet, subject: string, record: Foreign): Promise<number> {
  const h = headers();
  if (record.hub !== null) {
    h.set(WalHeader.Epoch, record.hub.epoch);
    h.set(WalHeader.Sequence, record.hub.sequence);
  }
  return (await net.js.publish(subject, record.data, { headers: h })).seq;
}

/**
 * The shapes a record the hub did not write takes, after the channel's last envelope `last`: hub-like JSON without
 * the epoch header, a valid-looking envelope of another channel with the hub's headers, an envelope of this channel
 * with the hub's headers that repeats a sequence the channel has, and a JetStream API answer (last: as the channel's
 * tail it is no envelope at all).
 */
function foreignShapes(last: Envelope, epoch: number): Foreign[] {
  const next = (last.sequence ?? 0) + 1;
  return [
    {
      data: JSON.stringify({ ...last, envelope_id: newId(), sequence: next }),
      hub: null,
    },
    {
      data: JSON.stringify({ ...last, channel_id: newId(), envelope_id: newId(), sequence: next }),
      hub: { epoch: String(epoch), sequence: String(next) },
    },
    {
      data: JSON.stringify({ ...last, envelope_id: newId() }),
      hub: { epoch: String(epoch), sequence: String(last.sequence ?? 0) },
    },
    JS_API_ANSWER,
  ];
}

/** A JetStream API answer, as a request whose reply subject named the WAL subject would leave there. */
const JS_API_ANSWER: Foreign = {
  data: JSON.stringify({
    type: 'io.nats.jetstream.api.v1.consumer_info_response',
    error: { code: 404, err_code: 10014, description: 'consumer not found' },
  }),
  hub: null,
};

/** A settled conversation of alice and bob with one text; its WAL subject. */
async function conversation(net: TestNet) {
  const alice = await register(net, 'alice');
  const bob = await register(net, 'bob');
  const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
  await say(net, alice, cid, 'hi');
  await settle(net, cid);
  return { alice, bob, cid, subject: net.names.wal(cid) };
}

async function lastOf(net: TestNet, reader: TestAgent, channelId: string): Promise<Envelope> {
  const last = (await readWal(net, reader, channelId)).at(-1);
  if (last === undefined) throw new Error('the channel has no log');
  return last;
}

/** The live hub's state, then a cold hub's over the same NATS after the live one closed. */
async function liveAndCold(net: TestNet) {
  const live = structuredClone(net.hub.snapshot());
  await net.hub.close();
  const cold = await startColdHub(net);
  return { live, cold: cold.snapshot() };
}

/** An arbiter that holds sends of the text `hold` until the test lets them go (the post is then in flight). */
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
  };
  return { arbiter, inside, release };
}

describe('foreign records on a live WAL subject', () => {
  it('every shape is quarantined once and audited once; the next post takes the next sequence; a cold hub agrees', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, cid, subject } = await conversation(net);
    const before = await readWal(net, alice, cid);
    const last = await lastOf(net, alice, cid);
    const seqs: number[] = [];
    for (const record of foreignShapes(last, net.hub.epoch)) seqs.push(await plant(net, subject, record));

    net.clock.advance(1_000);
    const next = await say(net, bob, cid, 'after the foreign records');
    expect(next.sequence).toBe((last.sequence ?? 0) + 1);
    expect(net.hub.health().quarantined).toBe(4);
    const records = await auditCount(net, { kinds: ['quarantined'] }, 4);
    expect(records.map((r) => [r['source'], r['key'], r['seq']])).toEqual(seqs.map((seq) => ['wal', subject, seq]));

    const wal = await readWal(net, alice, cid);
    expect(sequences(wal)).toEqual(oneTo(before.length + 1));
    expect(wal.map((e) => e.envelope_id)).toEqual([...before.map((e) => e.envelope_id), next.envelope_id]);
    await settle(net, cid);
    // Delivery skipped the same records: still counted once each.
    expect(net.hub.health().quarantined).toBe(4);

    const { live, cold } = await liveAndCold(net);
    expect(cold).toEqual(live);
    expect(await net.rpc.call('health', {})).toMatchObject({ role: 'active' });
    expect((await say(net, alice, cid, 'on the cold hub')).sequence).toBe(before.length + 2);
    expect(await audit(net, { kinds: ['quarantined'] })).toHaveLength(4);
  });

  it('several foreign records in a row between the posts of a hot channel: every post acked once, in order', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, cid, subject } = await conversation(net);
    const before = await readWal(net, alice, cid);
    let planted = 0;
    const acked: HubResponse<'post'>[] = [];
    for (let round = 0; round < 6; round += 1) {
      const last = await lastOf(net, alice, cid);
      // 1, 2, 3, 4, 1, 2 records of the four shapes in a row, the last of them the channel's tail.
      const shapes = foreignShapes(last, net.hub.epoch).slice(-((round % 4) + 1));
      for (const record of shapes) await plant(net, subject, record);
      planted += shapes.length;
      net.clock.advance(1_000);
      acked.push(await say(net, round % 2 === 0 ? alice : bob, cid, `turn ${round}`));
    }

    expect(acked.map((a) => a.sequence)).toEqual(oneTo(6).map((i) => before.length + i));
    expect(net.hub.health().quarantined).toBe(planted);
    await auditCount(net, { kinds: ['quarantined'] }, planted);
    const wal = await readWal(net, alice, cid);
    expect(sequences(wal)).toEqual(oneTo(before.length + 6));
    expect(wal.slice(before.length).map((e) => e.envelope_id)).toEqual(acked.map((e) => e.envelope_id));
    await settle(net, cid);

    const { live, cold } = await liveAndCold(net);
    expect(cold).toEqual(live);
    expect(await audit(net, { kinds: ['quarantined'] })).toHaveLength(planted);
  });

  it('foreign records published while concurrent posts are being appended: each post present exactly once', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, cid, subject } = await conversation(net);
    const before = await readWal(net, alice, cid);
    const last = await lastOf(net, alice, cid);
    const shapes = foreignShapes(last, net.hub.epoch);
    const posts = oneTo(24).map((i) => say(net, i % 2 === 0 ? alice : bob, cid, `burst ${i}`));
    const plants = oneTo(8).map((i) => plant(net, subject, shapes[(i - 1) % shapes.length] ?? JS_API_ANSWER));
    const [acked] = await Promise.all([Promise.all(posts), Promise.all(plants)]);

    // A post after the burst catches up with whatever was planted after the last append.
    net.clock.advance(1_000);
    const after = await say(net, alice, cid, 'after the burst');
    const wal = await readWal(net, alice, cid);
    expect(sequences(wal)).toEqual(oneTo(before.length + 25));
    const ids = wal.slice(before.length).map((e) => e.envelope_id);
    expect(new Set(ids).size).toBe(25);
    expect(ids.sort()).toEqual([...acked, after].map((e) => e.envelope_id).sort());
    for (const envelope of acked) expect(wal[(envelope.sequence ?? 0) - 1]?.envelope_id).toBe(envelope.envelope_id);
    expect(net.hub.health().quarantined).toBe(8);
    await auditCount(net, { kinds: ['quarantined'] }, 8);
    await settle(net, cid);

    const { live, cold } = await liveAndCold(net);
    expect(cold).toEqual(live);
  });

  it('a foreign record that lands while a post is in admission: the post goes after it with the next sequence', async () => {
    const { arbiter, inside, release } = gatedArbiter();
    await using net = await openNet(nats.url, { arbiter });
    const { alice, bob, cid, subject } = await conversation(net);
    const last = await lastOf(net, alice, cid);

    const held = say(net, alice, cid, 'hold');
    await inside;
    const seq = await plant(net, subject, JS_API_ANSWER);
    release();
    const posted = await held;
    expect(posted.sequence).toBe((last.sequence ?? 0) + 1);
    expect(net.hub.health().quarantined).toBe(1);
    const records = await auditCount(net, { kinds: ['quarantined'] }, 1);
    expect(records.map((r) => [r['source'], r['key'], r['seq']])).toEqual([['wal', subject, seq]]);
    net.clock.advance(1_000);
    expect((await say(net, bob, cid, 'next')).sequence).toBe((last.sequence ?? 0) + 2);
    await settle(net, cid);

    const { live, cold } = await liveAndCold(net);
    expect(cold).toEqual(live);
  });

  it('a flood of foreign records: one post gives up with unavailable after its skips, the retry goes on from there', async () => {
    await using net = await openNet(nats.url);
    const { alice, cid, subject } = await conversation(net);
    const before = await readWal(net, alice, cid);
    const flood = MAX_SKIPS_PER_APPEND + 10;
    for (let i = 0; i < flood; i += 1) {
      await plant(net, subject, { data: JSON.stringify({ ok: true, result: { i } }), hub: null });
    }

    const envelope = { channel_id: cid, sender_id: alice.id, event_type: EV_TEXT, event_data: { text: 'first try' } };
    expect(await rawFailure(net, net.names.rpc('post', alice.id), JSON.stringify(envelope))).toEqual({
      code: 'unavailable',
      message: `channel '${cid}' has more records the hub did not write than one post skips; retry`,
    });
    // Nothing was appended: the retry (a client resends the same post) goes after the rest of the flood.
    expect(await readWal(net, alice, cid)).toEqual(before);
    const posted = await say(net, alice, cid, 'retried');
    expect(posted.sequence).toBe(before.length + 1);
    expect(net.hub.health().quarantined).toBe(flood);
    await auditCount(net, { kinds: ['quarantined'] }, flood);
    await settle(net, cid);

    const { live, cold } = await liveAndCold(net);
    expect(cold).toEqual(live);
  });
});
