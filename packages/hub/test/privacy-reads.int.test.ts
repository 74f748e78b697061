import { roundRobin } from '@ag2net/adapters';
import { EV_CONTEXT_SET, EV_PACKET, NetworkError, OPERATOR_CALLER, newId } from '@ag2net/protocol';
import { natsPerFile } from '@ag2net/test-support';
import { describe, expect, it } from 'vitest';
import { asOperator, openChannel, openNet, post, register, settle, type TestAgent, type TestNet } from './support.js';

const nats = natsPerFile();

/** What only bob (and alice, who sent it) may learn. */
const SECRET = 'launch-code-7421';
const PLAN = 'plan-b-under-wraps';

/**
 * A workflow alice → bob → carol where alice tells bob alone a context variable (`EV_CONTEXT_SET`) and then takes her
 * turn with a packet to bob alone that sets another, and bob answers her privately. Carol is a member outside those
 * envelopes' audience, mallory a registered non-member, `ghost` an id nobody registered.
 */
async function privateWorkflow(net: TestNet) {
  const alice = await register(net, 'alice');
  const bob = await register(net, 'bob');
  const carol = await register(net, 'carol');
  const mallory = await register(net, 'mallory');
  const graph = roundRobin([alice.id, bob.id, carol.id]).toDict();
  const knobs = { graph, context_vars: { topic: 'pricing' } };
  const cid = (await openChannel(net, alice, 'workflow', [bob, carol], { knobs })).channel_id;
  const told = await post(net, alice, {
    channel_id: cid,
    audience: [bob.id],
    event_type: EV_CONTEXT_SET,
    event_data: { set: { secret: SECRET }, delete: [] },
  });
  const packet = await post(net, alice, {
    channel_id: cid,
    audience: [bob.id],
    event_type: EV_PACKET,
    event_data: { routing: { kind: 'text' }, context_updates: { set: { plan: PLAN }, delete: [] }, body: PLAN },
  });
  const answer = await post(net, bob, {
    channel_id: cid,
    audience: [alice.id],
    event_type: EV_PACKET,
    event_data: { routing: { kind: 'text' }, context_updates: { set: {}, delete: [] }, body: `ack ${SECRET}` },
    causation_id: packet.envelope_id,
  });
  await net.rpc.call(
    'observeTask',
    { task: { task_id: 'review', owner_id: alice.id, channel_id: cid, created_at: '2026-01-01T00:00:00Z' } },
    { caller: alice.id },
  );
  await settle(net, cid);
  const privateIds = [told.envelope_id, packet.envelope_id, answer.envelope_id];
  return { alice, bob, carol, mallory, ghost: newId(), cid, privateIds, packet };
}

/** Every channel read of the network as `caller`: each answer, or the wire error it got instead. */
async function everyRead(net: TestNet, caller: string, ctx: { cid: string; bob: TestAgent; packetId: string }) {
  const as = { caller };
  const attempt = async (read: () => Promise<unknown>) => {
    try {
      return await read();
    } catch (err) {
      if (err instanceof NetworkError) return { code: err.code, message: err.message };
      throw err;
    }
  };
  const channel = { channel_id: ctx.cid };
  return {
    adapterState: await attempt(() => net.rpc.call('adapterState', channel, as)),
    getChannel: await attempt(() => net.rpc.call('getChannel', channel, as)),
    listChannels: await attempt(() => net.rpc.call('listChannels', {}, as)),
    readWal: await attempt(() => net.rpc.call('readWal', channel, as)),
    findEnvelopeByCausation: await attempt(() =>
      net.rpc.call('findEnvelopeByCausation', { ...channel, sender_id: ctx.bob.id, causation_id: ctx.packetId }, as),
    ),
    getTask: await attempt(() => net.rpc.call('getTask', { task_id: 'review' }, as)),
    listTasks: await attempt(() => net.rpc.call('listTasks', {}, as)),
  };
}

/** True when `value`'s JSON mentions any of `needles`. */
function mentions(value: unknown, needles: readonly string[]): string[] {
  const text = JSON.stringify(value);
  return needles.filter((n) => text.includes(n));
}

describe('privacy of every channel read', () => {
  it('a member outside a private envelope’s audience learns nothing of it through any read', async () => {
    await using net = await openNet(nats.url);
    const w = await privateWorkflow(net);
    const reads = await everyRead(net, w.carol.id, { cid: w.cid, bob: w.bob, packetId: w.packet.envelope_id });
    expect(mentions(reads, [SECRET, PLAN, 'secret', 'plan'])).toEqual([]);
    const { adapterState, ...contentReads } = reads;
    expect(mentions(contentReads, w.privateIds)).toEqual([]);
    // What carol does see: the channel's turn structure (whose turn, how many turns, which envelope took the last
    // one, as `pendingTurnsFor` tells its next speaker) and the variables everyone was given.
    expect(adapterState).toEqual({
      state: {
        participant_order: [w.alice.id, w.bob.id, w.carol.id].sort(),
        expected_next_speaker: w.carol.id,
        last_speaker_id: w.bob.id,
        last_envelope_id: w.privateIds[2],
        turn_count: 2,
        pending_close_reason: '',
        creator_id: w.alice.id,
        graph_data: roundRobin([w.alice.id, w.bob.id, w.carol.id]).toDict(),
        context_vars: { topic: 'pricing' },
      },
    });
    expect(reads.findEnvelopeByCausation).toEqual({ envelope: null });
    expect(reads.getTask).toMatchObject({ task: { task_id: 'review', channel_id: w.cid } });
  });

  it('the audience sees what was addressed to it (the reads above could have leaked)', async () => {
    await using net = await openNet(nats.url);
    const w = await privateWorkflow(net);
    const reads = await everyRead(net, w.bob.id, { cid: w.cid, bob: w.bob, packetId: w.packet.envelope_id });
    expect(reads.adapterState).toMatchObject({
      state: { context_vars: { topic: 'pricing', secret: SECRET, plan: PLAN } },
    });
    expect(mentions(reads.readWal, w.privateIds)).toEqual(w.privateIds);
    // bob's own answer was addressed to alice; its sender sees it.
    expect(reads.findEnvelopeByCausation).toMatchObject({ envelope: { envelope_id: w.privateIds[2] } });
    const operator = await everyRead(net, OPERATOR_CALLER, { cid: w.cid, bob: w.bob, packetId: w.packet.envelope_id });
    expect(mentions(operator, [SECRET, PLAN, ...w.privateIds])).toEqual([SECRET, PLAN, ...w.privateIds]);
  });

  it('a registered non-member learns no more than of nothing at all, an unregistered caller but a refusal', async () => {
    await using net = await openNet(nats.url);
    const w = await privateWorkflow(net);
    const noChannel = { code: 'not_found', message: `channel not found: ${w.cid}` };
    expect(await everyRead(net, w.mallory.id, { cid: w.cid, bob: w.bob, packetId: w.packet.envelope_id })).toEqual({
      adapterState: noChannel,
      getChannel: noChannel,
      listChannels: { channels: [], next_cursor: null },
      readWal: noChannel,
      findEnvelopeByCausation: noChannel,
      getTask: { code: 'not_found', message: 'task not found: review' },
      listTasks: { tasks: [], next_cursor: null },
    });
    const unknown = { code: 'access_denied', message: `unknown caller '${w.ghost}'` };
    expect(await everyRead(net, w.ghost, { cid: w.cid, bob: w.bob, packetId: w.packet.envelope_id })).toEqual({
      adapterState: unknown,
      getChannel: unknown,
      listChannels: unknown,
      readWal: unknown,
      findEnvelopeByCausation: unknown,
      getTask: unknown,
      listTasks: unknown,
    });
  });

  it('listChannels shows a caller only its own channels, the agent_id filter narrowing them; the operator all', async () => {
    await using net = await openNet(nats.url);
    const w = await privateWorkflow(net);
    const other = (await openChannel(net, w.mallory, 'conversation', [w.bob])).channel_id;
    const ids = async (caller: string, agentId: string | null = null) =>
      (await net.rpc.call('listChannels', { agent_id: agentId }, { caller })).channels.map((c) => c.channel_id);
    expect(await ids(w.carol.id)).toEqual([w.cid]);
    expect(await ids(w.mallory.id)).toEqual([other]);
    expect(await ids(w.bob.id)).toEqual([w.cid, other]);
    expect(await ids(w.bob.id, w.mallory.id)).toEqual([other]);
    expect(await ids(w.carol.id, w.mallory.id)).toEqual([]);
    expect((await net.rpc.call('listChannels', {}, asOperator)).channels.map((c) => c.channel_id)).toEqual([
      w.cid,
      other,
    ]);
  });
});
