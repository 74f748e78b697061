import { EV_CHANNEL_CLOSED, EV_TEXT, newId } from '@ag2net/protocol';
import { natsPerFile } from '@ag2net/test-support';
import { describe, expect, it } from 'vitest';
import { allowAllArbiter, deny, ruleBasedArbiter, type HubArbiter } from '../src/index.js';
import {
  asOperator,
  failure,
  openChannel,
  openNet,
  readWal,
  register,
  say,
  types,
  type TestAgent,
  type TestNet,
} from './support.js';

const nats = natsPerFile();

async function closeChannel(net: TestNet, by: TestAgent, cid: string): Promise<void> {
  await net.rpc.call('closeChannel', { channel_id: cid }, { caller: by.id });
}

async function listedChannels(net: TestNet): Promise<number> {
  return (await net.rpc.call('listChannels', {}, asOperator)).channels.length;
}

describe('access rules', () => {
  it('outbound_to lets a sender reach matching names only; an unknown channel is not_found first', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice', { rule: { access: { outbound_to: ['bot-*'] } } });
    const bob = await register(net, 'bot-bob');
    const eve = await register(net, 'user-eve');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    expect((await say(net, alice, cid, 'to bob', { audience: [bob.id] })).sequence).toBe(4);
    expect(await failure(openChannel(net, alice, 'conversation', [eve]))).toEqual({
      code: 'access_denied',
      message: "sender 'alice' not permitted to send to 'user-eve'",
    });
    // The access class of `post` is checked before the rule: an unknown channel is not_found for everyone alike.
    const unknown = newId();
    expect(await failure(say(net, alice, unknown, 'hi', { audience: [eve.id] }))).toEqual({
      code: 'not_found',
      message: `channel not found: ${unknown}`,
    });
    // A broadcast names nobody, and the hub's own notices are not the sender's sends.
    await say(net, alice, cid, 'to everyone');
    await closeChannel(net, alice, cid);
    await bob.mailbox.waitFor((e) => e.channel_id === cid && e.event_type === EV_CHANNEL_CLOSED, 'the close');
  });

  it('an invitee whose inbound_from does not match the creator refuses the channel, and none is created', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob', { rule: { access: { inbound_from: ['carol-*'] } } });
    expect(await failure(openChannel(net, alice, 'conversation', [bob]))).toEqual({
      code: 'access_denied',
      message: "invitee 'bob' does not accept inbound from 'alice'",
    });
    expect(await listedChannels(net)).toBe(0);
  });

  it('an inbound_from tightened mid-channel keeps text in the log but out of the inbox, at once', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    await net.rpc.call('setRule', { rule: { access: { inbound_from: ['carol-*'] } } }, { caller: bob.id });
    const text = await say(net, alice, cid, 'can you hear me?');
    await closeChannel(net, alice, cid);
    // Deliveries follow the log: once the close reached bob, the text's turn to be delivered has passed.
    await bob.mailbox.waitFor((e) => e.channel_id === cid && e.event_type === EV_CHANNEL_CLOSED, 'the close');
    expect(bob.mailbox.has(text.envelope_id)).toBe(false);
    expect(types(await readWal(net, alice, cid))).toContain(EV_TEXT);
  });

  it('channel_types limits which channel types an agent initiates and accepts', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice', { rule: { access: { channel_types: { initiate: ['conv*'] } } } });
    const bob = await register(net, 'bob', { rule: { access: { channel_types: { accept: ['consulting'] } } } });
    const carol = await register(net, 'carol');
    expect(await failure(openChannel(net, alice, 'discussion', [carol]))).toEqual({
      code: 'access_denied',
      message: "creator 'alice' may not initiate 'discussion' channels",
    });
    expect(await failure(openChannel(net, carol, 'conversation', [bob]))).toEqual({
      code: 'access_denied',
      message: "invitee 'bob' does not accept 'conversation' channels",
    });
    expect((await openChannel(net, carol, 'consulting', [bob])).state).toBe('active');
    expect((await openChannel(net, alice, 'conversation', [carol])).state).toBe('active');
  });

  it('setRule applies to the very next send', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    await say(net, alice, cid, 'first', { audience: [bob.id] });
    await net.rpc.call('setRule', { rule: { access: { outbound_to: ['carol'] } } }, { caller: alice.id });
    expect(await failure(say(net, alice, cid, 'second', { audience: [bob.id] }))).toEqual({
      code: 'access_denied',
      message: "sender 'alice' not permitted to send to 'bob'",
    });
  });
});

describe('limits', () => {
  it('channel_ttl_default sets a channel’s expiry, a ttl overrides it, and a ttl of 0 means none', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice', { rule: { limits: { channel_ttl_default: '1h' } } });
    const bob = await register(net, 'bob');
    expect((await openChannel(net, alice, 'conversation', [bob])).expires_at).toBe('2026-01-01T01:00:00.000Z');
    expect((await openChannel(net, alice, 'conversation', [bob], { ttl: '30m' })).expires_at).toBe(
      '2026-01-01T00:30:00.000Z',
    );
    expect((await openChannel(net, alice, 'conversation', [bob], { ttl: 0 })).expires_at).toBeNull();
    expect((await openChannel(net, bob, 'conversation', [alice])).expires_at).toBe('2026-01-01T02:00:00.000Z');
  });

  it('delegation_depth refuses a deeper envelope, accepts one at the cap, and 0 means the operator ceiling', async () => {
    await using net = await openNet(nats.url);
    const carol = await register(net, 'carol', { rule: { limits: { delegation_depth: 2 } } });
    const dave = await register(net, 'dave', { rule: { limits: { delegation_depth: 0 } } });
    const cid = (await openChannel(net, carol, 'conversation', [dave])).channel_id;
    expect(await failure(say(net, carol, cid, 'deep', { depth: 3 }))).toEqual({
      code: 'access_denied',
      message: "sender 'carol' exceeded delegation_depth (3 > 2)",
    });
    expect((await say(net, carol, cid, 'at the cap', { depth: 2 })).sequence).toBe(4);
    // 0 asks for no cap of its own: the operator's ceiling (16 by default) still holds.
    expect((await say(net, dave, cid, 'as deep as allowed', { depth: 16 })).sequence).toBe(5);
    expect(await failure(say(net, dave, cid, 'too deep', { depth: 17 }))).toEqual({
      code: 'access_denied',
      message: "sender 'dave' exceeded delegation_depth (17 > 16)",
    });
  });

  it('max_concurrent_channels refuses one channel too many until one of them ends; 0 means no cap', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice', { rule: { limits: { max_concurrent_channels: 2 } } });
    const bob = await register(net, 'bob');
    const first = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    await openChannel(net, alice, 'conversation', [bob]);
    expect(await failure(openChannel(net, alice, 'conversation', [bob]))).toEqual({
      code: 'access_denied',
      message: `creator '${alice.id}' exceeded max_concurrent_channels (2 >= 2)`,
    });
    await closeChannel(net, alice, first);
    expect((await openChannel(net, alice, 'conversation', [bob])).state).toBe('active');
    for (let i = 0; i < 4; i += 1) await openChannel(net, bob, 'conversation', [alice]);
    expect(await listedChannels(net)).toBe(7);
  });

  it('a rate limit admits a burst of concurrent posts up to its capacity, then one per refill', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice', { rule: { limits: { rate: { per_minute: 60, burst: 3 } } } });
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    const limited = { code: 'access_denied', message: "sender 'alice' exceeded rate limit (60/min, burst 3)" };
    const burst = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        say(net, alice, cid, `m${i}`).then(
          () => 'admitted',
          (err: unknown) => failure(Promise.reject(err instanceof Error ? err : new Error(String(err)))),
        ),
      ),
    );
    expect(burst.filter((r) => r === 'admitted')).toHaveLength(3);
    expect(burst.filter((r) => r !== 'admitted')).toEqual(Array.from({ length: 7 }, () => limited));

    net.clock.advance(999);
    expect(await failure(say(net, alice, cid, 'too soon'))).toEqual(limited);
    net.clock.advance(1);
    await say(net, alice, cid, 'one per second');
    expect(await failure(say(net, alice, cid, 'again'))).toEqual(limited);
    net.clock.advance(60_000);
    for (const n of [1, 2, 3]) await say(net, alice, cid, `refilled ${n}`);
    expect(await failure(say(net, alice, cid, 'over'))).toEqual(limited);
    // Other senders have their own bucket.
    await say(net, bob, cid, 'unlimited');
    expect((await readWal(net, bob, cid)).filter((e) => e.event_type === EV_TEXT)).toHaveLength(8);
  });

  it('a refused post takes no token, nor does a retry of an admitted one', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice', { rule: { limits: { rate: { per_minute: 1, burst: 2 } } } });
    const bob = await register(net, 'bob');
    const talk = (await openChannel(net, alice, 'discussion', [bob])).channel_id;
    const first = await say(net, alice, talk, 'my turn');
    expect(await failure(say(net, alice, talk, 'out of turn'))).toMatchObject({ code: 'protocol_error' });
    await say(net, alice, talk, 'my turn', { envelope_id: first.envelope_id });
    await say(net, bob, talk, 'your turn');
    await say(net, alice, talk, 'my second turn');
    await say(net, bob, talk, 'your turn again');
    expect(await failure(say(net, alice, talk, 'third'))).toEqual({
      code: 'access_denied',
      message: "sender 'alice' exceeded rate limit (1/min, burst 2)",
    });
  });
});

describe('arbiters', () => {
  it('a custom arbiter denies with its own reason and code', async () => {
    const arbiter: HubArbiter = {
      ...ruleBasedArbiter,
      authorizeSend: (check) =>
        check.envelope.depth > 0 ? deny('custom denial') : ruleBasedArbiter.authorizeSend(check),
      authorizeInbox: (check) => (check.pending >= 1 ? deny('custom full', 'inbox_full') : { allow: true }),
    };
    await using net = await openNet(nats.url, { arbiter });
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    expect(await failure(say(net, alice, cid, 'deep', { depth: 1 }))).toEqual({
      code: 'access_denied',
      message: 'custom denial',
    });
    await say(net, alice, cid, 'one');
    expect(await failure(say(net, alice, cid, 'two'))).toEqual({ code: 'inbox_full', message: 'custom full' });
  });

  it('the allow-all arbiter lets through what the rules would refuse', async () => {
    await using net = await openNet(nats.url, { arbiter: allowAllArbiter });
    const alice = await register(net, 'alice', { rule: { limits: { max_concurrent_channels: 1 } } });
    const bob = await register(net, 'bob', { rule: { access: { inbound_from: ['nobody'] } } });
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    await openChannel(net, alice, 'conversation', [bob]);
    const text = await say(net, alice, cid, 'delivered');
    await bob.mailbox.waitFor((e) => e.envelope_id === text.envelope_id, 'the text');
  });
});
