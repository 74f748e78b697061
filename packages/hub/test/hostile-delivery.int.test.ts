/**
 * Poison-proof delivery: a recipient the arbiter chokes on, an inbox that keeps refusing, and a WAL message that is
 * no envelope each cost their own delivery at most, never the deliveries behind them.
 */
import { ConversationAdapter, createDefaultAdapterRegistry } from '@ag2net/adapters';
import { WalHeader } from '@ag2net/protocol/internal';
import {
  ChannelManifestSchema,
  EV_CHANNEL_OPENED,
  EV_TEXT,
  createEnvelope,
  newId,
  type ChannelManifestInput,
  type Envelope,
} from '@ag2net/protocol';
import { natsPerFile } from '@ag2net/test-support';
import { jetstreamManager } from '@nats-io/jetstream';
import { headers } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { ARBITER_FAILED, ruleBasedArbiter, type HubArbiter, type ViolationHandler } from '../src/index.js';
import {
  auditCount,
  drained,
  failure,
  openChannel,
  openNet,
  register,
  say,
  tickAfter,
  type TestAgent,
} from './support.js';
import { waitFor } from '@ag2net/test-support';

const nats = natsPerFile();

function texts(agent: TestAgent, channelId: string): unknown[] {
  return agent.mailbox.of(channelId, EV_TEXT).map((e: Envelope) => e.event_data['text']);
}

/** A conversation type with its own expectations (a custom adapter is how a channel type gets them). */
function customAdapter(type: string, expectations: ChannelManifestInput['expectations']): ConversationAdapter {
  const manifest = ChannelManifestSchema.parse({ type, participants: { min: 2, max: 2 }, expectations });
  return new (class extends ConversationAdapter {
    override readonly manifest = manifest;
  })();
}

function withAdapters(...adapters: ConversationAdapter[]) {
  const registry = createDefaultAdapterRegistry();
  for (const a of adapters) registry.register(a);
  return registry;
}

function numbered(from: number, to: number, step: number): string[] {
  const out: string[] = [];
  for (let n = from; n < to; n += step) out.push(`m${n}`);
  return out;
}

describe('poison-proof delivery', () => {
  it('an arbiter that throws for one recipient skips only that delivery; 300 messages behind it reach the rest', async () => {
    const arbiter: HubArbiter = {
      ...ruleBasedArbiter,
      authorizeDispatch: (check) => {
        if (check.recipient.passport.name === 'target') throw new Error('policy bug');
        return ruleBasedArbiter.authorizeDispatch(check);
      },
    };
    await using net = await openNet(nats.url, { arbiter });
    const alice = await register(net, 'alice');
    const target = await register(net, 'target');
    const carol = await register(net, 'carol');
    const dave = await register(net, 'dave');
    const first = (await openChannel(net, alice, 'conversation', [target])).channel_id;
    const second = (await openChannel(net, alice, 'conversation', [carol])).channel_id;
    const third = (await openChannel(net, alice, 'conversation', [dave])).channel_id;
    await say(net, alice, first, 'poisoned');
    for (let n = 0; n < 300; n += 1) await say(net, alice, n % 2 === 0 ? second : third, `m${n}`);
    await say(net, alice, first, 'after');
    await carol.mailbox.waitFor((e) => e.event_data['text'] === 'm298', 'the last text of the second channel');
    await dave.mailbox.waitFor((e) => e.event_data['text'] === 'm299', 'the last text of the third channel');
    expect(texts(carol, second)).toEqual(numbered(0, 300, 2));
    expect(texts(dave, third)).toEqual(numbered(1, 300, 2));
    await drained(net);
    // The hub's own notices are not the arbiter's to filter: the target got the opening, and no text.
    expect(target.mailbox.of(first, EV_CHANNEL_OPENED)).toHaveLength(1);
    expect(texts(target, first)).toEqual([]);
    expect(net.hub.health().dead_letters).toBe(0);
  });

  it('an arbiter that throws at admission refuses that post as a denial, not an internal error', async () => {
    const arbiter: HubArbiter = {
      ...ruleBasedArbiter,
      authorizeSend: (check) => {
        if (check.envelope.event_data['text'] === 'boom') throw new Error('policy bug');
        return ruleBasedArbiter.authorizeSend(check);
      },
    };
    await using net = await openNet(nats.url, { arbiter });
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    expect(await failure(say(net, alice, cid, 'boom'))).toEqual({ code: 'access_denied', message: ARBITER_FAILED });
    expect((await say(net, alice, cid, 'fine')).sequence).toBe(4);
  });

  it('a fan-out an inbox keeps refusing is dead-lettered after its retries; other channels move on meanwhile', async () => {
    await using net = await openNet(nats.url, { limits: { inboxMaxMessages: 3 } });
    const jsm = await jetstreamManager(net.nc);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const carol = await register(net, 'carol');
    const first = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    const second = (await openChannel(net, alice, 'conversation', [carol])).channel_id;
    // Bob stops reading once his inbox is empty; three texts then fill it to the stream's hard cap.
    await bob.mailbox.closeWhenRead();
    await waitFor(
      async () => {
        const info = await jsm.consumers.info(net.names.inboxStream, net.names.inboxConsumer(bob.id));
        return info.num_pending + info.num_ack_pending === 0;
      },
      { what: "bob's inbox to be empty", timeoutMs: 10_000 },
    );
    for (const n of [1, 2, 3]) await say(net, alice, first, `m${n}`);
    const poison = await say(net, alice, first, 'one too many');
    const stored = await jsm.streams.getMessage(net.names.walStream, { last_by_subj: net.names.wal(first) });
    if (stored === null) throw new Error('the poison is not in the WAL');
    const walSeq = stored.seq;
    for (let n = 0; n < 300; n += 1) await say(net, alice, second, `m${n}`);
    await carol.mailbox.waitFor((e) => e.event_data['text'] === 'm299', 'the last text of the other channel');
    expect(texts(carol, second)).toEqual(numbered(0, 300, 1));

    const [letter] = await auditCount(net, { kinds: ['delivery_dead_lettered'] }, 1);
    expect(letter).toMatchObject({
      kind: 'delivery_dead_lettered',
      id: `delivery_dead_lettered.${walSeq}`,
      channel_id: first,
      envelope_id: poison.envelope_id,
      stream_seq: walSeq,
      recipients: [bob.id],
      reason: 'maximum messages per subject exceeded',
      envelope: { envelope_id: poison.envelope_id, event_data: { text: 'one too many' } },
    });
    await drained(net);
    expect(net.hub.health().dead_letters).toBe(1);
  });

  it('a broadcast of a channel the hub does not know is dead-lettered, never acked to nobody', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    // An envelope with the hub's headers on the subject of a channel no hub created: it has no participants to
    // reach, and acking it as delivered would lose it without a trace.
    const stray = newId();
    const envelope = createEnvelope({
      channel_id: stray,
      sender_id: alice.id,
      event_type: EV_TEXT,
      event_data: { text: 'to whom?' },
    });
    const h = headers();
    h.set(WalHeader.Epoch, String(net.hub.epoch));
    h.set(WalHeader.Sequence, '1');
    const planted = await net.js.publish(net.names.wal(stray), JSON.stringify({ ...envelope, sequence: 1 }), {
      headers: h,
    });
    await say(net, alice, cid, 'after the stray');
    await bob.mailbox.waitFor((e) => e.event_data['text'] === 'after the stray', 'the text after the stray');
    const [letter] = await auditCount(net, { kinds: ['delivery_dead_lettered'] }, 1);
    expect(letter).toMatchObject({
      kind: 'delivery_dead_lettered',
      id: `delivery_dead_lettered.${planted.seq}`,
      channel_id: stray,
      envelope_id: envelope.envelope_id,
      stream_seq: planted.seq,
      recipients: [],
      reason: 'channel not known to the hub',
    });
    await drained(net);
    expect(net.hub.health().dead_letters).toBe(1);
  });

  it('a WAL message that is no envelope is quarantined and audited, and delivery goes on', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    const subject = net.names.wal('planted');
    const planted = await net.js.publish(subject, JSON.stringify({ not: 'an envelope' }));
    await say(net, alice, cid, 'after the garbage');
    await bob.mailbox.waitFor((e) => e.event_data['text'] === 'after the garbage', 'the text after the garbage');
    const [record] = await auditCount(net, { kinds: ['quarantined'] }, 1);
    expect(record).toMatchObject({ kind: 'quarantined', source: 'wal', key: subject, seq: planted.seq });
    await drained(net);
    expect(net.hub.health().quarantined).toBe(1);
  });
});

describe('user violation handlers', () => {
  it('a handler that never settles times out outside the channel lock, and is audited', async () => {
    let calls = 0;
    const hang: ViolationHandler = {
      name: 'hang',
      notify: 'nobody',
      timeoutMs: 50,
      handle: () => {
        calls += 1;
        return new Promise<void>(() => undefined);
      },
    };
    const quiet = customAdapter('quiet', [{ name: 'max_silence', on_violation: 'hang', params: { seconds: 60 } }]);
    await using net = await openNet(nats.url, { adapters: withAdapters(quiet), violationHandlers: [hang] });
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'quiet', [bob])).channel_id;
    await tickAfter(net, 60_000);
    expect(calls).toBe(1);
    // The channel is not held while the handler hangs.
    expect((await say(net, alice, cid, 'still here')).sequence).toBe(5);
    const [record] = await auditCount(net, { kinds: ['violation_handler_failed'] }, 1);
    expect(record).toMatchObject({
      channel_id: cid,
      expectation: 'max_silence',
      handler: 'hang',
      reason: 'timed out after 50 ms',
    });
  });
});
