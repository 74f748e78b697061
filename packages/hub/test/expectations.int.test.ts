import { ConversationAdapter, createDefaultAdapterRegistry, roundRobin } from '@ag2net/adapters';
import {
  ChannelManifestSchema,
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_INVITE,
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_OPENED,
  EV_EXPECTATION_VIOLATED,
  EV_TEXT,
  newId,
  type ChannelManifestInput,
} from '@ag2net/protocol';
import { natsPerFile } from '@ag2net/test-support';
import { describe, expect, it } from 'vitest';
import type { ViolationHandler } from '../src/governance/violation-handlers.js';
import {
  asOperator,
  audit,
  drained,
  failure,
  getChannel,
  openChannel,
  openNet,
  post,
  readWal,
  register,
  say,
  settle,
  startColdHub,
  tickAfter,
  types,
  waitForState,
  type TestNet,
} from './support.js';

const nats = natsPerFile();

/** A two-party channel type with the given expectations (a conversation otherwise). */
function customAdapter(type: string, expectations: ChannelManifestInput['expectations']) {
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

async function violations(net: TestNet) {
  await drained(net);
  return audit(net, { kinds: ['expectation_violated'] });
}

describe('built-in expectations on the built-in channel types', () => {
  it('closes a consulting channel whose respondent never acks with expectation_violated:acks_within', async () => {
    await using net = await openNet(nats.url, { inviteAckTimeoutMs: 300_000 });
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob', { invites: 'ignore' });
    const cid = newId();
    const creating = failure(openChannel(net, alice, 'consulting', [bob], { channel_id: cid }));
    await bob.mailbox.waitFor((e) => e.event_type === EV_CHANNEL_INVITE, 'the invite');

    await tickAfter(net, 29_999);
    expect((await getChannel(net, cid)).state).toBe('pending');
    await tickAfter(net, 15_001);

    expect(await creating).toEqual({
      code: 'protocol_error',
      message: `channel '${cid}' closed during handshake: expectation_violated:acks_within`,
    });
    expect((await waitForState(net, cid, 'closed')).close_reason).toBe('expectation_violated:acks_within');
    expect(types(await readWal(net, alice, cid))).toEqual([
      EV_CHANNEL_INVITE,
      EV_EXPECTATION_VIOLATED,
      EV_CHANNEL_CLOSED,
    ]);
    const [record, ...rest] = await violations(net);
    expect(rest).toEqual([]);
    expect(record).toMatchObject({
      kind: 'expectation_violated',
      channel_id: cid,
      expectation: 'acks_within',
      on_violation: 'auto_close',
      params: { seconds: 30 },
      violators: [bob.id],
      detail: { elapsed_seconds: 45, threshold_seconds: 30 },
      at: '2026-01-01T00:00:45.000Z',
    });
  });

  it('closes a consulting channel whose respondent does not reply within 600 s, naming the respondent', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'consulting', [bob])).channel_id;
    await say(net, alice, cid, 'what is 6 x 7?');
    await tickAfter(net, 599_999);
    expect((await getChannel(net, cid)).state).toBe('active');
    await tickAfter(net, 1);
    expect((await waitForState(net, cid, 'closed')).close_reason).toBe('expectation_violated:reply_within');
    expect((await violations(net)).map((r) => [r['expectation'], r['violators'], r['detail']])).toEqual([
      ['reply_within', [bob.id], { threshold_seconds: 600 }],
    ]);
  });

  it('only audits a silent conversation: it stays active, nobody is told, and the violation is recorded once', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    await tickAfter(net, 3_700_000);
    await tickAfter(net, 1_000);
    await tickAfter(net, 1_000);
    await settle(net, cid);

    expect((await getChannel(net, cid)).state).toBe('active');
    expect(alice.mailbox.of(cid, EV_EXPECTATION_VIOLATED)).toEqual([]);
    expect(bob.mailbox.of(cid, EV_EXPECTATION_VIOLATED)).toEqual([]);
    // The record is in the log, addressed to nobody: bob cannot read it; alice, in whose name it is, can.
    expect(types(await readWal(net, bob, cid))).toEqual([EV_CHANNEL_INVITE, EV_CHANNEL_INVITE_ACK, EV_CHANNEL_OPENED]);
    const record = (await readWal(net, alice, cid)).find((e) => e.event_type === EV_EXPECTATION_VIOLATED);
    expect(record?.audience).toEqual([]);
    expect(
      (await violations(net)).map((r) => [r['expectation'], r['on_violation'], r['violators'], r['detail']]),
    ).toEqual([['max_silence', 'audit', [], { elapsed_seconds: 3700, threshold_seconds: 3600 }]]);
  });

  it('warns the discussion speaker who is late, then hides it so the rotation goes on without it', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const carol = await register(net, 'carol');
    const cid = (await openChannel(net, alice, 'discussion', [bob, carol])).channel_id;

    await tickAfter(net, 120_000);
    const warn = await alice.mailbox.waitFor((e) => e.event_type === EV_EXPECTATION_VIOLATED, 'the warning');
    expect(warn.audience).toEqual([alice.id]);
    expect(warn.event_data).toMatchObject({
      expectation: 'turn_within',
      on_violation: 'warn',
      violators: [alice.id],
      detail: { elapsed_seconds: 120, threshold_seconds: 120 },
    });

    await tickAfter(net, 480_000);
    const hidden = await alice.mailbox.waitFor((e) => e.event_data['on_violation'] === 'hide', 'the hide notice');
    // The record also reaches bob, to whom it passes the turn: his agent has nothing else to learn that from.
    expect(hidden.audience).toEqual([alice.id, bob.id]);
    await bob.mailbox.waitFor((e) => e.envelope_id === hidden.envelope_id, 'the hide notice at bob');
    expect((await net.rpc.call('adapterState', { channel_id: cid }, asOperator)).state).toMatchObject({
      expected_next_speaker: bob.id,
      hidden: [alice.id],
    });
    expect((await net.rpc.call('pendingTurnsFor', {}, { caller: bob.id })).turns).toEqual([
      { channel_id: cid, triggering_envelope_id: null, expected_at: '2026-01-01T00:10:00.000Z' },
    ]);
    await tickAfter(net, 0);

    await say(net, bob, cid, 'I will go');
    await say(net, carol, cid, 'me next');
    expect((await net.rpc.call('adapterState', { channel_id: cid }, asOperator)).state).toMatchObject({
      expected_next_speaker: bob.id,
    });
    await say(net, alice, cid, 'sorry, back');
    expect((await net.rpc.call('adapterState', { channel_id: cid }, asOperator)).state).toEqual({
      participant_order: [alice.id, bob.id, carol.id],
      expected_next_speaker: bob.id,
      last_speaker_id: alice.id,
      last_envelope_id: (await readWal(net, alice, cid)).at(-1)?.envelope_id,
      turn_count: 3,
    });
    await settle(net, cid);
    expect(bob.mailbox.of(cid, EV_EXPECTATION_VIOLATED).map((e) => e.envelope_id)).toEqual([hidden.envelope_id]);
    expect(carol.mailbox.of(cid, EV_EXPECTATION_VIOLATED)).toEqual([]);
    expect((await violations(net)).map((r) => [r['on_violation'], r['violators']])).toEqual([
      ['warn', [alice.id]],
      ['hide', [alice.id]],
    ]);
  });

  it('warns the workflow speaker who is late, then closes the workflow with expectation_violated:turn_within', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const graph = roundRobin([alice.id, bob.id]).toDict();
    const cid = (await openChannel(net, alice, 'workflow', [bob], { knobs: { graph } })).channel_id;
    await say(net, alice, cid, 'over to bob');
    await tickAfter(net, 120_000);
    await bob.mailbox.waitFor((e) => e.event_type === EV_EXPECTATION_VIOLATED, 'the warning');
    await tickAfter(net, 480_000);
    expect((await waitForState(net, cid, 'closed')).close_reason).toBe('expectation_violated:turn_within');
    expect((await violations(net)).map((r) => [r['on_violation'], r['violators']])).toEqual([
      ['warn', [bob.id]],
      ['auto_close', [bob.id]],
    ]);
    expect(alice.mailbox.of(cid, EV_EXPECTATION_VIOLATED)).toEqual([]);
  });

  it('refuses an ag2.expectation.violated envelope posted by a client', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'conversation', [bob])).channel_id;
    const forged = post(net, alice, {
      channel_id: cid,
      event_type: EV_EXPECTATION_VIOLATED,
      event_data: { expectation: 'turn_within', violators: [bob.id], detail: {}, on_violation: 'hide' },
    });
    expect(await failure(forged)).toEqual({
      code: 'protocol_error',
      message: 'ag2.expectation.violated events are written by the hub',
    });
  });
});

describe('handlers and custom expectations', () => {
  it('notify_channel tells every participant once, keeps the channel open, and audits once over three ticks', async () => {
    const quiet = customAdapter('quiet', [
      { name: 'max_silence', on_violation: 'notify_channel', params: { seconds: 60 } },
    ]);
    await using net = await openNet(nats.url, { adapters: withAdapters(quiet) });
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'quiet', [bob])).channel_id;
    await tickAfter(net, 120_000);
    await tickAfter(net, 1_000);
    await tickAfter(net, 1_000);
    await settle(net, cid);
    for (const agent of [alice, bob]) {
      expect(agent.mailbox.of(cid, EV_EXPECTATION_VIOLATED).map((e) => e.event_data)).toEqual([
        {
          expectation: 'max_silence',
          violators: [],
          detail: { elapsed_seconds: 120, threshold_seconds: 60 },
          on_violation: 'notify_channel',
          params: { seconds: 60 },
          expectation_index: 0,
          scope: '',
        },
      ]);
    }
    expect((await getChannel(net, cid)).state).toBe('active');
    expect(await violations(net)).toHaveLength(1);
  });

  it('calls a raising handler once and does not call it again on later ticks', async () => {
    let calls = 0;
    const explode: ViolationHandler = {
      name: 'explode',
      notify: 'nobody',
      handle: () => {
        calls += 1;
        throw new Error('boom');
      },
    };
    const quiet = customAdapter('quiet', [{ name: 'max_silence', on_violation: 'explode', params: { seconds: 60 } }]);
    await using net = await openNet(nats.url, { adapters: withAdapters(quiet), violationHandlers: [explode] });
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    await openChannel(net, alice, 'quiet', [bob]);
    await tickAfter(net, 120_000);
    await tickAfter(net, 1_000);
    await tickAfter(net, 100_000);
    expect(calls).toBe(1);
    expect(await violations(net)).toHaveLength(1);
  });

  it('fires two expectations with different thresholds and handlers each once, at their own times', async () => {
    const seen: string[] = [];
    const audit2: ViolationHandler = { name: 'audit2', notify: 'nobody', handle: (v) => void seen.push(v.expectation) };
    const acks = customAdapter('acks', [
      { name: 'acks_within', on_violation: 'warn', params: { seconds: 30 } },
      { name: 'acks_within', on_violation: 'audit2', params: { seconds: 60 } },
    ]);
    await using net = await openNet(nats.url, {
      adapters: withAdapters(acks),
      violationHandlers: [audit2],
      inviteAckTimeoutMs: 300_000,
    });
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob', { invites: 'ignore' });
    const cid = newId();
    void openChannel(net, alice, 'acks', [bob], { channel_id: cid }).catch(() => undefined);
    await bob.mailbox.waitFor((e) => e.event_type === EV_CHANNEL_INVITE, 'the invite');

    await tickAfter(net, 35_000);
    expect((await violations(net)).map((r) => r['on_violation'])).toEqual(['warn']);
    const warning = await bob.mailbox.waitFor((e) => e.event_type === EV_EXPECTATION_VIOLATED, 'the warning');
    expect(warning.audience).toEqual([bob.id]);
    await tickAfter(net, 30_000);
    await tickAfter(net, 1_000);
    expect((await violations(net)).map((r) => r['on_violation'])).toEqual(['warn', 'audit2']);
    expect(seen).toEqual(['acks_within']);
    expect((await getChannel(net, cid)).state).toBe('pending');
  });

  it('skips an unknown evaluator and an unknown handler without failing the sweep or recording anything', async () => {
    const odd = customAdapter('odd', [
      { name: 'no_such_evaluator', on_violation: 'audit' },
      { name: 'max_silence', on_violation: 'no_such_handler', params: { seconds: 0 } },
    ]);
    await using net = await openNet(nats.url, { adapters: withAdapters(odd) });
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const cid = (await openChannel(net, alice, 'odd', [bob])).channel_id;
    await tickAfter(net, 10_000);
    expect(await violations(net)).toEqual([]);
    expect(types(await readWal(net, alice, cid))).toEqual([
      EV_CHANNEL_INVITE,
      EV_CHANNEL_INVITE_ACK,
      EV_CHANNEL_OPENED,
    ]);
  });

  it('closes two auto_close channels and audits both violations in one tick', async () => {
    const strict = customAdapter('strict', [
      { name: 'max_silence', on_violation: 'auto_close', params: { seconds: 60 } },
    ]);
    await using net = await openNet(nats.url, { adapters: withAdapters(strict) });
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const first = (await openChannel(net, alice, 'strict', [bob])).channel_id;
    const second = (await openChannel(net, bob, 'strict', [alice])).channel_id;
    await tickAfter(net, 61_000);
    for (const cid of [first, second]) {
      expect((await waitForState(net, cid, 'closed')).close_reason).toBe('expectation_violated:max_silence');
    }
    expect((await violations(net)).map((r) => r['channel_id'])).toEqual([first, second]);
  });
});

describe('violations across a restart', () => {
  it('a cold hub rebuilds the fired violations and the hidden participant, and fires nothing again', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob');
    const carol = await register(net, 'carol');
    const cid = (await openChannel(net, alice, 'discussion', [bob, carol])).channel_id;
    await tickAfter(net, 600_000);
    await say(net, bob, cid, 'going on without alice');
    await settle(net, cid);
    await drained(net);

    const live = structuredClone(net.hub.snapshot());
    const log = await readWal(net, alice, cid);
    await net.hub.close();
    const cold = await startColdHub(net);
    expect(cold.snapshot()).toEqual(live);

    await tickAfter(net, 0);
    expect(await readWal(net, alice, cid)).toEqual(log);
    expect((await violations(net)).map((r) => [r['on_violation'], r['violators']])).toEqual([
      ['warn', [alice.id]],
      ['hide', [alice.id]],
    ]);
    expect((await net.rpc.call('adapterState', { channel_id: cid }, asOperator)).state).toMatchObject({
      expected_next_speaker: carol.id,
      hidden: [alice.id],
    });
    expect(log.filter((e) => e.event_type === EV_TEXT)).toHaveLength(1);
  });
});
