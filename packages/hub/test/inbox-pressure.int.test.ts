/**
 * `inbox pressure` is logged when a recipient's inbox really holds `high_water` unread messages, once per episode:
 * never for a recipient that acks everything, however much it receives.
 */
import type { Logger } from '@ag2net/hub';
import { EV_TEXT } from '@ag2net/protocol';
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
  type TestAgent,
  type TestNet,
} from './support.js';

const nats = natsPerFile();

/** A logger that keeps the fields of every `inbox pressure` line. */
function pressureLines(): Logger & { readonly lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const ignore = (): void => undefined;
  const warn = (obj: object, msg?: string): void => {
    if (msg === 'inbox pressure') lines.push({ ...obj });
  };
  const logger = { lines, debug: ignore, info: ignore, warn, error: ignore, child: () => logger };
  return logger;
}

/** What waits in an agent's inbox: delivered and not acked, or not yet delivered. */
async function inboxDepth(jsm: JetStreamManager, net: TestNet, agent: TestAgent): Promise<number> {
  const info = await jsm.consumers.info(net.names.inboxStream, net.names.inboxConsumer(agent.id));
  return info.num_pending + info.num_ack_pending;
}

async function depthIs(jsm: JetStreamManager, net: TestNet, agent: TestAgent, depth: number): Promise<void> {
  await waitFor(async () => (await inboxDepth(jsm, net, agent)) === depth, {
    what: `${depth} messages in the inbox of ${agent.name}`,
    timeoutMs: 10_000,
  });
}

describe('inbox pressure', () => {
  it('is never logged for a recipient that acks everything, however many envelopes it receives', async () => {
    const logger = pressureLines();
    await using net = await openNet(nats.url, { logger });
    const jsm = await jetstreamManager(net.nc);
    const alice = await register(net, 'alice');
    // A cap of 10, so the high-water mark (8) is reached by the estimate every 8 envelopes.
    const bob = await register(net, 'bob', { rule: { limits: { inbox: { max_pending: 10 } } } });
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    for (let n = 1; n <= 60; n += 1) {
      await say(net, alice, cid, `m${n}`);
      await drained(net);
      await depthIs(jsm, net, bob, 0);
    }
    expect(bob.mailbox.of(cid, EV_TEXT)).toHaveLength(60);
    expect(logger.lines).toEqual([]);
  });

  it('is logged once per episode for a recipient that stops reading, naming the agent and the channel', async () => {
    const logger = pressureLines();
    await using net = await openNet(nats.url, { logger });
    const jsm = await jetstreamManager(net.nc);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob', { rule: { limits: { inbox: { max_pending: 10 } } } });
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    await bob.mailbox.closeWhenRead();
    await depthIs(jsm, net, bob, 0);
    const line = {
      agent: 'bob',
      agentId: bob.id,
      channel: 'conversation',
      channelId: cid,
      pending: 8,
      highWater: 8,
      maxPending: 10,
    };

    /** Posts until bob's inbox holds `unread` messages, then once more: that post's check finds it at the mark. */
    const fillTo = async (unread: number): Promise<void> => {
      for (let depth = await inboxDepth(jsm, net, bob); depth < unread; depth += 1) {
        await say(net, alice, cid, `unread ${depth + 1}`);
        await depthIs(jsm, net, bob, depth + 1);
      }
      await say(net, alice, cid, 'one more');
      await depthIs(jsm, net, bob, unread + 1);
    };

    await fillTo(8);
    expect(logger.lines).toEqual([line]);
    // Still unread: the same episode, nothing more is logged up to the cap, where posts are refused.
    expect(await inboxDepth(jsm, net, bob)).toBe(9);
    await say(net, alice, cid, 'tenth');
    await depthIs(jsm, net, bob, 10);
    expect((await failure(say(net, alice, cid, 'refused'))).code).toBe('inbox_full');
    expect(logger.lines).toEqual([line]);

    // Bob reads everything: the next check finds his inbox under the mark and the episode ends.
    const reader = await Mailbox.open(net, bob.id, 'ack');
    await depthIs(jsm, net, bob, 0);
    await say(net, alice, cid, 'read again');
    await drained(net);
    await depthIs(jsm, net, bob, 0);
    await reader.close();
    expect(logger.lines).toEqual([line]);

    // He stops again: a second episode, logged once.
    await fillTo(8);
    expect(logger.lines).toEqual([line, line]);
  });
});
