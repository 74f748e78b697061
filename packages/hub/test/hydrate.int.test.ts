import { roundRobin } from '@ag2net/adapters';
import { EV_CHANNEL_CLOSED, EV_CHANNEL_INVITE, EV_PACKET, newId } from '@ag2net/protocol';
import { natsPerFile } from '@ag2net/test-support';
import { describe, expect, it } from 'vitest';
import {
  asOperator,
  INVITE_ACK_TIMEOUT_MS,
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
  types,
  waitForState,
  type TestAgent,
  type TestNet,
} from './support.js';

const nats = natsPerFile();

function packet(cid: string, routing: Record<string, unknown>, body: string) {
  return {
    channel_id: cid,
    event_type: EV_PACKET,
    event_data: { routing, context_updates: { set: {}, delete: [] }, body },
  };
}

/** Runs every protocol through its paces on the live hub and returns the ids of what it left behind. */
async function scenario(net: TestNet, alice: TestAgent, bob: TestAgent, carol: TestAgent) {
  const tick = () => net.clock.advance(1_000);

  // Consulting, complete: question, answer, closed.
  const consult = (await openChannel(net, alice, 'consulting', [bob])).channel_id;
  const question = await say(net, alice, consult, 'what is 6 x 7?');
  tick();
  await say(net, bob, consult, '42', { causation_id: question.envelope_id });
  await waitForState(net, consult, 'closed');

  // Conversation, three turns, still open.
  const chat = (await openChannel(net, bob, 'conversation', [carol])).channel_id;
  for (const [speaker, text] of [
    [bob, 'hi'],
    [carol, 'hello'],
    [bob, 'how are you?'],
  ] as const) {
    tick();
    await say(net, speaker, chat, text);
  }

  // Discussion, four turns (a full round and one more), still open: bob speaks next.
  const talk = (await openChannel(net, alice, 'discussion', [bob, carol], { labels: { topic: 'budget' } })).channel_id;
  for (const speaker of [alice, bob, carol, alice]) {
    tick();
    await say(net, speaker, talk, `${speaker.name} speaks`);
  }

  // Workflow: alice hands off to carol past bob, carol finishes.
  const graph = roundRobin([alice.id, bob.id, carol.id]).toDict();
  const flow = (await openChannel(net, alice, 'workflow', [bob, carol], { knobs: { graph, context_vars: { n: 1 } } }))
    .channel_id;
  tick();
  await post(net, alice, packet(flow, { kind: 'handoff', tool: 'transfer', reason: 'legal', target: carol.id }, 'go'));
  tick();
  await post(net, carol, packet(flow, { kind: 'finish', tool: 'finish', reason: 'done', summary: 'ok' }, 'all set'));
  await waitForState(net, flow, 'closed');

  // Consulting left mid-way: the question is out, bob owes the answer.
  const open = (await openChannel(net, carol, 'consulting', [alice])).channel_id;
  tick();
  const pending = await say(net, carol, open, 'are you there?');

  for (const cid of [consult, chat, talk, flow, open]) await settle(net, cid);
  return { consult, chat, talk, flow, open, pending };
}

describe('hydrate', () => {
  it('a cold hub on the same NATS rebuilds exactly the live state of every protocol and carries on', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice', {
      resume: { claimed_capabilities: ['math'], summary: 'Statistician' },
      skillMd: '# Alice',
    });
    const bob = await register(net, 'bob');
    const carol = await register(net, 'carol', { passport: { kind: 'human' } });
    const dave = await register(net, 'dave');
    await net.rpc.call(
      'setResume',
      { resume: { claimed_capabilities: ['writing'], summary: 'Writer' } },
      { caller: bob.id },
    );
    await net.rpc.call('setRule', { rule: { limits: { delegation_depth: 2 } } }, { caller: carol.id });
    await net.rpc.call('unregister', {}, { caller: dave.id });
    const s = await scenario(net, alice, bob, carol);

    const live = structuredClone(net.hub.snapshot());
    const talkWal = await readWal(net, alice, s.talk);
    await net.hub.close();
    const cold = await startColdHub(net);

    expect(cold.snapshot()).toEqual(live);

    // The cold hub serves the same registry…
    expect((await net.rpc.call('getAgent', { name_or_id: 'alice' })).passport).toEqual(alice.passport);
    expect((await net.rpc.call('getSkill', { agent_id: alice.id })).skill_md).toBe('# Alice');
    expect((await net.rpc.call('findAgentId', { name: 'dave' })).agent_id).toBeNull();
    const writers = await net.rpc.call('listAgents', { capability: 'writing' });
    expect(writers.agents.map((p) => p.name)).toEqual(['bob']);
    expect(await net.rpc.call('health', {})).toMatchObject({
      role: 'active',
      registered_agents: 3,
      active_channels: 3,
    });

    // …and continues each open channel where the first hub stopped.
    const last = talkWal.at(-1);
    expect(await failure(say(net, alice, s.talk, 'me again'))).toEqual({
      code: 'protocol_error',
      message: `discussion channel '${s.talk}' expects '${bob.id}' to speak, got '${alice.id}'`,
    });
    net.clock.advance(1_000);
    const next = await say(net, bob, s.talk, 'bob speaks again');
    expect(next.sequence).toBe((last?.sequence ?? 0) + 1);
    await carol.mailbox.waitFor((e) => e.envelope_id === next.envelope_id, 'the next turn');
    expect((await net.rpc.call('adapterState', { channel_id: s.talk }, asOperator)).state).toMatchObject({
      expected_next_speaker: carol.id,
      turn_count: 5,
    });

    // A retry of a post the first hub admitted is recognised by the second.
    const admitted = (await readWal(net, bob, s.chat)).at(-1);
    const retried = await say(net, bob, s.chat, 'how are you?', { envelope_id: admitted?.envelope_id });
    expect(retried).toEqual({ envelope_id: admitted?.envelope_id, sequence: 6, created_at: admitted?.created_at });

    // The consulting channel left mid-way completes on the cold hub.
    await say(net, alice, s.open, 'yes', { causation_id: s.pending.envelope_id });
    expect((await waitForState(net, s.open, 'closed')).close_reason).toBe('consulting_complete');
    expect((await getChannel(net, s.flow)).close_reason).toBe('done');
  });

  it('a channel still pending at shutdown times out on the cold hub, and a retried create learns so', async () => {
    await using net = await openNet(nats.url);
    const alice = await register(net, 'alice');
    const bob = await register(net, 'bob', { invites: 'ignore' });
    const cid = newId();
    const creating = openChannel(net, alice, 'conversation', [bob], { channel_id: cid });
    // The first call ends with the hub that took it, one way or another; the retry below is what the client relies on.
    creating.catch(() => undefined);
    await bob.mailbox.waitFor((e) => e.channel_id === cid && e.event_type === EV_CHANNEL_INVITE, 'the invite');

    const live = structuredClone(net.hub.snapshot());
    await net.hub.close();
    const cold = await startColdHub(net);
    expect(cold.snapshot()).toEqual(live);
    expect(await getChannel(net, cid)).toMatchObject({ state: 'pending', pending_acks: [bob.id] });

    net.clock.advance(INVITE_ACK_TIMEOUT_MS + 1);
    await cold.tick();
    expect((await waitForState(net, cid, 'closed')).close_reason).toBe('invite_timeout');
    expect(types(await readWal(net, alice, cid))).toEqual([EV_CHANNEL_INVITE, EV_CHANNEL_CLOSED]);
    expect(await failure(openChannel(net, alice, 'conversation', [bob], { channel_id: cid }))).toEqual({
      code: 'protocol_error',
      message: `channel '${cid}' ack timeout`,
    });
  });
});
