import { KeyedSerial, WalHeader } from '@ag2net/protocol/internal';
import { EV_TEXT, createEnvelope, type Envelope } from '@ag2net/protocol';
import { natsPerFile } from '@ag2net/test-support';
import { Kvm } from '@nats-io/kv';
import { silentLogger } from '../src/base/logger.js';
import { applyAppended, newRuntime } from '../src/stores/channel-runtime.js';
import { ChannelTable } from '../src/stores/channel-table.js';
import { SEQ_CHUNK } from '../src/stores/snapshot-record.js';
import { SnapshotStore } from '../src/stores/snapshot-store.js';
import { headers } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import type { Logger } from '@ag2net/hub';
import {
  audit,
  openChannel,
  openNet,
  readWal,
  register,
  say,
  settle,
  startColdHub,
  waitForState,
  type TestNet,
} from './support.js';

const nats = natsPerFile();

/** A logger that keeps the fields of every `hydrated` line. */
function hydratedLines(): Logger & { readonly lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const keep = (obj: object, msg?: string): void => {
    if (msg === 'hydrated') lines.push({ ...obj });
  };
  const logger = { lines, debug: keep, info: keep, warn: keep, error: keep, child: () => logger };
  return logger;
}

/** Appends an envelope straight to its channel's WAL with the hub's headers, as another writer of the hub would. */
async function appendAsAnotherWriter(net: TestNet, envelope: Envelope): Promise<number> {
  const h = headers();
  h.set(WalHeader.Epoch, '1');
  h.set(WalHeader.Sequence, String(envelope.sequence ?? 0));
  return (await net.js.publish(net.names.wal(envelope.channel_id), JSON.stringify(envelope), { headers: h })).seq;
}

async function snapshotsBucket(net: TestNet) {
  return new Kvm(net.nc).open(net.names.snapshotsBucket);
}

/** Two agents in a conversation of `turns` texts, settled. */
async function conversation(net: TestNet, turns: number) {
  const alice = await register(net, 'alice');
  const bob = await register(net, 'bob');
  const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
  for (let i = 0; i < turns; i += 1) {
    net.clock.advance(1_000);
    await say(net, i % 2 === 0 ? alice : bob, cid, `turn ${i}`);
  }
  await settle(net, cid);
  return { alice, bob, cid };
}

describe('snapshots', () => {
  it('a cold hub restores an open channel from its snapshot and folds only the entries after it', async () => {
    const logger = hydratedLines();
    await using net = await openNet(nats.url, { logger });
    const { alice, bob, cid } = await conversation(net, 5);
    const live = structuredClone(net.hub.snapshot());
    const log = await readWal(net, alice, cid);
    await net.hub.close();

    // Stepping down wrote the channel's snapshot: it covers the whole log.
    const stored = await (await snapshotsBucket(net)).get(`open.${cid}`);
    const record: unknown = JSON.parse(stored?.string() ?? 'null');
    expect(record).toMatchObject({ channel_id: cid, sequence: log.length, last_envelope_id: log.at(-1)?.envelope_id });

    const cold = await startColdHub(net);
    expect(logger.lines.at(-1)).toMatchObject({ channels: 1, open: 1, restored: 1, envelopes: 0, quarantined: 0 });
    expect(cold.snapshot()).toEqual(live);
    await cold.close();

    // Two more entries after the snapshot: the next hydrate folds exactly those.
    const next = log.length + 1;
    const more = [alice, bob].map((who, i) =>
      createEnvelope({
        channel_id: cid,
        sender_id: who.id,
        event_type: EV_TEXT,
        event_data: { text: `late ${i}` },
        created_at: '2026-01-01T00:10:00.000Z',
        sequence: next + i,
      }),
    );
    for (const envelope of more) await appendAsAnotherWriter(net, envelope);
    await startColdHub(net);
    expect(logger.lines.at(-1)).toMatchObject({ open: 1, restored: 1, envelopes: 2, quarantined: 0 });
    net.clock.advance(1_000);
    expect((await say(net, alice, cid, 'after the tail')).sequence).toBe(next + 2);
    expect((await readWal(net, bob, cid)).map((e) => e.sequence)).toEqual(
      Array.from({ length: next + 2 }, (_, i) => i + 1),
    );
    expect((await net.rpc.call('adapterState', { channel_id: cid }, { caller: alice.id })).state).toMatchObject({
      turn_count: 8,
    });
  });

  it('a snapshot that does not parse or does not match the log is quarantined, audited and ignored', async () => {
    const logger = hydratedLines();
    await using net = await openNet(nats.url, { logger });
    const { cid } = await conversation(net, 3);
    const alice = [...net.agents.values()].find((a) => a.name === 'alice');
    const carol = await register(net, 'carol');
    if (alice === undefined) throw new Error('alice is registered');
    const other = (await openChannel(net, carol, 'conversation', [alice])).channel_id;
    await say(net, carol, other, 'hello');
    await settle(net, other);
    const live = structuredClone(net.hub.snapshot());
    await net.hub.close();

    const bucket = await snapshotsBucket(net);
    const stored = await bucket.get(`open.${cid}`);
    const forged = { ...(JSON.parse(stored?.string() ?? '{}') as Record<string, unknown>) };
    forged['state'] = { turn_count: 1_000 };
    forged['last_envelope_id'] = 'not-the-last';
    forged['envelope_ids'] = [['not-the-last', forged['sequence'], '2026-01-01T00:00:00.000Z']];
    await bucket.put(`open.${cid}`, JSON.stringify(forged));
    await bucket.put(`open.${other}`, '{"oops');

    const cold = await startColdHub(net);
    expect(logger.lines.at(-1)).toMatchObject({ open: 2, restored: 0, quarantined: 2 });
    expect(cold.snapshot()).toEqual(live);
    const records = await audit(net, { kinds: ['quarantined'] });
    expect(records.map((r) => [r['source'], r['key']]).sort()).toEqual(
      [
        ['snapshots', `open.${cid}`],
        ['snapshots', `open.${other}`],
      ].sort(),
    );
    expect(cold.health()).toMatchObject({ role: 'active', quarantined: 2 });
  });

  it('a long channel keeps its first stream sequences in chunks: small records, restored exactly, a lost chunk only means a fold', async () => {
    const logger = hydratedLines();
    await using net = await openNet(nats.url, { logger });
    const { alice, bob, cid } = await conversation(net, 1);
    const first = (await readWal(net, alice, cid)).length + 1;
    await net.hub.close();

    // More than a chunk of texts, written by another writer: the next hub folds them and snapshots the channel.
    const count = SEQ_CHUNK + 100;
    for (let from = 0; from < count; from += 500) {
      const batch = Array.from({ length: Math.min(500, count - from) }, (_, i) =>
        createEnvelope({
          channel_id: cid,
          sender_id: (from + i) % 2 === 0 ? alice.id : bob.id,
          event_type: EV_TEXT,
          event_data: { text: `line ${from + i}` },
          envelope_id: `line-${from + i}`,
          created_at: '2026-01-01T00:10:00.000Z',
          sequence: first + from + i,
        }),
      );
      await Promise.all(batch.map((envelope) => appendAsAnotherWriter(net, envelope)));
    }
    const folding = await startColdHub(net);
    expect(logger.lines.at(-1)).toMatchObject({ open: 1, restored: 1, envelopes: count, quarantined: 0 });
    const live = structuredClone(folding.snapshot());
    await folding.close();

    const bucket = await snapshotsBucket(net);
    const stored = await bucket.get(`open.${cid}`);
    const record = JSON.parse(stored?.string() ?? '{}') as { seq_chunks?: number; sequence?: number; v?: number };
    expect(record).toMatchObject({ v: 2, seq_chunks: 1, sequence: first + count - 1 });
    // The record holds the sequences after the chunk only: about 3 bytes each, plus its id window.
    expect(stored?.length ?? 0).toBeLessThan(100_000);
    const chunk = (await bucket.get(`seqs.${cid}.0`))?.string() ?? '';
    expect(chunk.split(',')).toHaveLength(SEQ_CHUNK);

    const restoring = await startColdHub(net);
    expect(logger.lines.at(-1)).toMatchObject({ open: 1, restored: 1, envelopes: 0, quarantined: 0 });
    expect(restoring.snapshot()).toEqual(live);
    net.clock.advance(1_000);
    expect((await say(net, alice, cid, 'after the chunk')).sequence).toBe(first + count);
    await settle(net, cid);
    const after = structuredClone(restoring.snapshot());
    await restoring.close();

    // Without its chunk the record cannot stand: quarantined, and the channel folds from its log to the same state.
    await bucket.purge(`seqs.${cid}.0`);
    const refolding = await startColdHub(net);
    expect(logger.lines.at(-1)).toMatchObject({ open: 1, restored: 0, envelopes: first + count, quarantined: 1 });
    const reasons = (await audit(net, { kinds: ['quarantined'] })).map((r) => [r['key'], r['reason']]);
    expect(reasons).toEqual([[`open.${cid}`, 'chunk 0 of the stream sequences is missing']]);
    expect(refolding.snapshot()).toEqual(after);
    expect(refolding.health()).toMatchObject({ role: 'active', quarantined: 1 });
    await refolding.close();

    // A damaged record that counts a billion chunks costs one batch of reads, not a billion: quarantined at once.
    const written = JSON.parse((await bucket.get(`open.${cid}`))?.string() ?? '{}') as Record<string, unknown>;
    const huge = 1_000_000_000 * SEQ_CHUNK;
    await bucket.put(`open.${cid}`, JSON.stringify({ ...written, sequence: huge, seq_chunks: 1_000_000_000 }));
    const damaged = await startColdHub(net);
    expect(logger.lines.at(-1)).toMatchObject({ open: 1, restored: 0, envelopes: first + count, quarantined: 1 });
    const last = (await audit(net, { kinds: ['quarantined'] })).map((r) => r['reason']).at(-1);
    // Chunk 0 is there again (the hub that refolded wrote it); chunk 1 never was.
    expect(last).toBe('chunk 1 of the stream sequences is missing');
    expect(damaged.snapshot()).toEqual(after);
  });

  it('writes a long channel’s chunks to the bucket once and removes them with its snapshots', async () => {
    await using net = await openNet(nats.url);
    const { alice, cid } = await conversation(net, 1);
    const metadata = net.hub.snapshot().channels.find((c) => c.metadata.channel_id === cid)?.metadata;
    if (metadata === undefined) throw new Error('the channel is in the hub');
    await net.hub.close();
    const bucket = await snapshotsBucket(net);
    const rt = newRuntime(metadata, null, null);
    const line = (n: number): void =>
      applyAppended(
        rt,
        createEnvelope({
          channel_id: cid,
          sender_id: alice.id,
          event_type: EV_TEXT,
          event_data: { text: `line ${n}` },
          envelope_id: `line-${n}`,
          created_at: '2026-01-01T00:10:00.000Z',
          sequence: n,
        }),
        2 * n,
      );
    for (let n = 1; n <= SEQ_CHUNK + 5; n += 1) line(n);
    const channels = new ChannelTable({} as never);
    channels.set(rt);
    const store = new SnapshotStore(bucket, {
      serial: new KeyedSerial(),
      channels,
      mayWrite: () => true,
      logger: silentLogger,
    });

    expect(await store.write(rt)).toBe(true);
    const loaded = await store.load(cid);
    if (loaded === null || !loaded.ok) throw new Error(`the snapshot loads: ${JSON.stringify(loaded)}`);
    expect(loaded.snapshot.record.seq_chunks).toBe(1);
    expect(loaded.snapshot.streamSeqs).toEqual(rt.streamSeqs);
    const chunkRevision = (await bucket.get(`seqs.${cid}.0`))?.revision;
    line(SEQ_CHUNK + 6);
    expect(await store.write(rt)).toBe(true);
    // The record was written again; its chunk was not.
    expect((await bucket.get(`seqs.${cid}.0`))?.revision).toBe(chunkRevision);
    const again = await store.load(cid);
    expect(again?.ok === true ? again.snapshot.streamSeqs : again).toEqual(rt.streamSeqs);

    await store.remove(cid);
    const left: string[] = [];
    for await (const key of await bucket.keys()) left.push(key);
    expect(left.filter((key) => key.includes(cid))).toEqual([]);
    expect(await store.load(cid)).toBeNull();
  });

  it('an ended channel is kept as metadata only and served from its final snapshot, on the live hub and a cold one', async () => {
    const logger = hydratedLines();
    await using net = await openNet(nats.url, { logger });
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'consulting', [bob])).channel_id;
    const question = await say(net, alice, cid, 'what is 6 x 7?');
    net.clock.advance(1_000);
    const answer = await say(net, bob, cid, '42', { causation_id: question.envelope_id });
    await waitForState(net, cid, 'closed');
    const log = await readWal(net, alice, cid);
    const state = (await net.rpc.call('adapterState', { channel_id: cid }, { caller: alice.id })).state;
    expect(state).toEqual({ initiator_sent: true, respondent_replied: true, last_envelope_id: answer.envelope_id });

    const retry = () =>
      say(net, bob, cid, '42', { causation_id: question.envelope_id, envelope_id: answer.envelope_id });
    expect(await retry()).toEqual(answer);
    await net.hub.close();

    await startColdHub(net);
    expect(logger.lines.at(-1)).toMatchObject({ channels: 1, open: 0, restored: 0, envelopes: 0 });
    expect(await readWal(net, bob, cid)).toEqual(log);
    expect((await net.rpc.call('adapterState', { channel_id: cid }, { caller: bob.id })).state).toEqual(state);
    expect(await retry()).toEqual(answer);
  });
});
