import { natsPerFile } from '@ag2net/test-support';
import { describe, expect, it } from 'vitest';
import { openChannel, openNet, register, say, startColdHub } from './support.js';

const nats = natsPerFile();

/** What a channel keeps of its envelope ids (the hub's `RECENT_IDS`). */
const WINDOW = 1024;

describe('bounded per-channel indexes', () => {
  it('keeps the last 1024 envelope ids, live and hydrated, and a retry of an older post is still not admitted twice', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    const first = await say(net, alice, cid, 'message 0', { causation_id: 'first' });
    // Alternate speakers so that neither inbox fills up.
    for (let i = 1; i <= WINDOW + 8; i += 1) await say(net, i % 2 === 0 ? alice : bob, cid, `message ${i}`);
    const total = WINDOW + 12; // invite, ack, opened, then WINDOW + 9 texts

    const channel = (hub: typeof net.hub) => hub.snapshot().channels.find((c) => c.metadata.channel_id === cid);
    const live = channel(net.hub);
    expect(live?.envelope_ids.length).toBe(WINDOW);
    expect(live?.envelope_ids[0]?.[1]).toBe(total - WINDOW + 1);
    expect(live?.stream_seqs.length).toBe(total);
    // The causation index holds recent answers, however old: only the invite ack and the first post name one.
    expect(live?.causation).toHaveLength(2);
    expect(live?.causation).toContainEqual([`${alice.id}\u0000first`, first.envelope_id]);

    // The first post is out of the window: its retry goes to the WAL, whose duplicate window knows the id.
    const retried = await say(net, alice, cid, 'message 0', { envelope_id: first.envelope_id, causation_id: 'first' });
    expect(retried).toEqual(first);
    expect((await net.rpc.call('readWal', { channel_id: cid }, { caller: alice.id })).last_sequence).toBe(total);

    const beforeClose = structuredClone(channel(net.hub));
    expect(beforeClose).toEqual(live);
    await net.hub.close();
    const cold = await startColdHub(net);
    expect(channel(cold)).toEqual(beforeClose);
  });
});
