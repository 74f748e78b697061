/**
 * `health.quarantined` counts each record the hub skipped once, whichever of its paths found it: delivery, the
 * writer's catch-up before an append, hydrate. Foreign messages are planted straight into a channel's WAL.
 */
import { WalHeader } from '@ag2net/protocol/internal';
import { newId, type Envelope } from '@ag2net/protocol';
import { natsPerFile } from '@ag2net/test-support';
import { headers } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
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

/** Publishes `data` straight to a WAL subject with the hub's headers, as a deposed writer would; its stream sequence. */
async function plant(net: TestNet, subject: string, data: string, sequence: number): Promise<number> {
  const h = headers();
  h.set(WalHeader.Epoch, '1');
  h.set(WalHeader.Sequence, String(sequence));
  return (await net.js.publish(subject, data, { headers: h })).seq;
}

/** A channel of alice and bob with one text, settled; its WAL subject and last envelope. */
async function conversation(net: TestNet) {
  const alice = await register(net, 'alice');
  const bob = await register(net, 'bob');
  const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
  await say(net, alice, cid, 'hi');
  await settle(net, cid);
  const last = (await readWal(net, alice, cid)).at(-1);
  if (last === undefined) throw new Error('the channel has no log');
  return { alice, bob, cid, subject: net.names.wal(cid), last };
}

describe('quarantine counts', () => {
  it('a foreign message that delivery quarantined and the writer’s catch-up skipped counts once', async () => {
    await using net = await openNet(nats.url);
    const { bob, cid, subject, last } = await conversation(net);
    // Not the channel's next entry: it repeats the last sequence under another id.
    const replayed: Envelope = { ...last, envelope_id: newId() };
    const seq = await plant(net, subject, JSON.stringify(replayed), last.sequence ?? 0);
    await auditCount(net, { kinds: ['quarantined'] }, 1);
    expect(net.hub.health().quarantined).toBe(1);

    // The next append finds the foreign entry after the tail it knows, skips it, and goes on after it.
    net.clock.advance(1_000);
    expect((await say(net, bob, cid, 'next')).sequence).toBe((last.sequence ?? 0) + 1);
    expect(net.hub.health().quarantined).toBe(1);
    const records = await audit(net, { kinds: ['quarantined'] });
    expect(records.map((r) => [r['source'], r['key'], r['seq']])).toEqual([['wal', subject, seq]]);
  });

  it('a foreign message that hydrate quarantined and delivery then skipped counts once', async () => {
    await using net = await openNet(nats.url);
    const { alice, bob, cid, subject, last } = await conversation(net);
    await net.hub.close();
    const next = (last.sequence ?? 0) + 1;
    const seq = await plant(net, subject, JSON.stringify({ ...last, envelope_id: newId(), sequence: next + 1 }), next);

    // The next hub hydrates over it; its delivery then reads the same unacked message. A text delivered after it
    // says that delivery is past it.
    await startColdHub(net);
    net.clock.advance(1_000);
    const after = await say(net, alice, cid, 'after');
    expect(after.sequence).toBe(next);
    await bob.mailbox.waitFor((e) => e.envelope_id === after.envelope_id, 'the text after the foreign message');
    expect(net.hub.health().quarantined).toBe(1);
    const records = await audit(net, { kinds: ['quarantined'] });
    expect(records.map((r) => [r['source'], r['key'], r['seq']])).toEqual([['wal', subject, seq]]);
  });
});
