/**
 * Inbox counts follow consumption: a recipient's pending count falls when its inbox consumer acks, so nobody can
 * fill another's inbox by talking to a listener that reads everything, and a listener that stops reading fills up.
 */
import { natsPerFile, waitFor } from '@ag2net/test-support';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import {
  Mailbox,
  drained,
  failure,
  openChannel,
  openNet,
  register,
  say,
  startColdHub,
  type TestAgent,
  type TestNet,
} from './support.js';

const nats = natsPerFile();

/** What waits in an agent's inbox: delivered and not acked, or not yet delivered. */
async function inboxDepth(jsm: JetStreamManager, net: TestNet, agent: TestAgent): Promise<number> {
  const info = await jsm.consumers.info(net.names.inboxStream, net.names.inboxConsumer(agent.id));
  return info.num_pending + info.num_ack_pending;
}

async function emptied(jsm: JetStreamManager, net: TestNet, agent: TestAgent): Promise<void> {
  await waitFor(async () => (await inboxDepth(jsm, net, agent)) === 0, {
    what: `the inbox of ${agent.name} to be empty`,
    timeoutMs: 10_000,
  });
}

describe('inbox counts reflect consumption', () => {
  it('1,000 posts to a listener that acks everything never fill its inbox for anyone, also after a restart', async () => {
    await using net = await openNet(nats.url, { limits: { postBurst: 2_000 } });
    const jsm = await jetstreamManager(net.nc);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const carol = await register(net, 'carol');
    const talk = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    const other = (await openChannel(net, carol, 'conversation', [bob])).channel_id;
    for (let batch = 0; batch < 50; batch += 1) {
      await Promise.all(Array.from({ length: 20 }, (_, i) => say(net, alice, talk, `m${batch * 20 + i}`)));
    }
    await drained(net);
    await emptied(jsm, net, bob);
    expect((await say(net, carol, other, 'can you still hear me?')).sequence).toBe(4);

    await net.hub.close();
    await startColdHub(net);
    expect((await say(net, carol, other, 'and now?')).sequence).toBe(5);
    expect((await say(net, alice, talk, 'me too')).sequence).toBe(1_004);
  });

  it('a listener that stops acking fills up: senders get inbox_full, also after a restart, until it reads again', async () => {
    await using net = await openNet(nats.url);
    const jsm = await jetstreamManager(net.nc);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob', { rule: { limits: { inbox: { max_pending: 3 } } } });
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    await bob.mailbox.closeWhenRead();
    await emptied(jsm, net, bob);
    for (const n of [1, 2, 3]) {
      await say(net, alice, cid, `m${n}`);
      await drained(net);
    }
    expect(await inboxDepth(jsm, net, bob)).toBe(3);
    const full = { code: 'inbox_full', message: `recipient '${bob.id}' inbox at capacity (3 >= 3)` };
    expect(await failure(say(net, alice, cid, 'm4'))).toEqual(full);

    await net.hub.close();
    await startColdHub(net);
    expect(await failure(say(net, alice, cid, 'm4'))).toEqual(full);
    // Bob reads again: his inbox empties and alice gets through.
    const reader = await Mailbox.open(net, bob.id, 'ack');
    try {
      await emptied(jsm, net, bob);
      expect((await say(net, alice, cid, 'm4')).sequence).toBe(7);
    } finally {
      await reader.close();
    }
  });

  it('unread invites count toward max_pending: a full inbox refuses a new channel with inbox_full', async () => {
    await using net = await openNet(nats.url);
    const jsm = await jetstreamManager(net.nc);
    const alice = await register(net, 'alice');
    const carol = await register(net, 'carol');
    const dave = await register(net, 'dave');
    const bob = await register(net, 'bob', { rule: { limits: { inbox: { max_pending: 2 } } } });
    await bob.mailbox.closeWhenRead();
    await emptied(jsm, net, bob);
    // Two channels to bob, who is not reading: their invites wait in his inbox.
    const waiting = [openChannel(net, alice, 'conversation', [bob]), openChannel(net, carol, 'conversation', [bob])];
    for (const opening of waiting) void opening.catch(() => undefined);
    await waitFor(async () => (await inboxDepth(jsm, net, bob)) === 2, { what: 'two invites', timeoutMs: 10_000 });
    expect(await failure(openChannel(net, dave, 'conversation', [bob]))).toEqual({
      code: 'inbox_full',
      message: `recipient '${bob.id}' inbox at capacity (2 >= 2)`,
    });
    expect(net.hub.snapshot().inbox_pending).toEqual([[bob.id, 2]]);
  });
});
