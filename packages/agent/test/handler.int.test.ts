import { replyEnvelopeId, type AgentClient } from '@ag2net/client';
import { EV_CHANNEL_CLOSED } from '@ag2net/protocol';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Agent, createScriptedModel, registerAgent } from '../src/index.js';
import { netKit, texts, until } from './support.js';

const kit = netKit();
beforeAll(() => kit.start());
afterEach(() => kit.closeAll());
afterAll(() => kit.stop());

const names = (...clients: { agentId: string; passport: { name: string } }[]): Record<string, string> =>
  Object.fromEntries(clients.map((c) => [c.agentId, c.passport.name]));
const toolNames = (call: { tools?: readonly { name: string }[] } | undefined): string[] =>
  (call?.tools ?? []).map((t) => t.name).sort();

describe('default handler', () => {
  it('answers a consulting question once and the channel closes as consulting_complete', async () => {
    const { client } = await kit.open();
    const alice = await client.registerHuman({ name: 'alice' });
    const model = createScriptedModel(["Hi, this is bob's reply."]);
    const bob = await registerAgent(client, new Agent({ name: 'bob', model }));
    const channel = await alice.open({ type: 'consulting', target: 'bob' });
    const asked = await channel.send('Hello bob, can you help?', { audience: [bob.agentId] });

    const closed = await alice.waitForChannelEvent(channel.channelId, { timeout: 15_000 });
    expect(closed?.event_type).toBe(EV_CHANNEL_CLOSED);
    expect(closed?.event_data).toEqual({ channel_id: channel.channelId, reason: 'consulting_complete' });
    const metadata = await alice.getChannel(channel.channelId);
    expect([metadata.state, metadata.close_reason]).toEqual(['closed', 'consulting_complete']);
    const log = await alice.readWal(channel.channelId);
    expect(texts(log, names(alice, bob))).toEqual([
      ['alice', 'Hello bob, can you help?'],
      ['bob', "Hi, this is bob's reply."],
    ]);
    const reply = log.find((e) => e.sender_id === bob.agentId && e.event_type === 'ag2.msg.text');
    expect([reply?.envelope_id, reply?.causation_id, reply?.audience]).toEqual([
      replyEnvelopeId(bob.agentId, asked),
      asked,
      null,
    ]);
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0]?.prompt).toEqual([
      { role: 'system', content: `You are bob (agent_id: ${bob.agentId}).` },
      { role: 'user', content: [{ type: 'text', text: 'Hello bob, can you help?' }] },
    ]);
    expect(toolNames(model.calls[0])).toEqual(['channels', 'context', 'delegate', 'peers', 'say', 'tasks']);
  });

  it('hands a message of text and data parts to the model as one content part each, and shows it as text to others', async () => {
    const { client } = await kit.open();
    const alice = await client.registerHuman({ name: 'alice' });
    const model = createScriptedModel(['Three steps, then.']);
    const bob = await registerAgent(client, new Agent({ name: 'bob', model }));
    const channel = await alice.open({ type: 'consulting', target: 'bob' });
    await channel.send(['How long will this take?', { kind: 'data', data: { steps: ['build', 'test', 'ship'] } }], {
      audience: [bob.agentId],
    });

    await alice.waitForChannelEvent(channel.channelId, { timeout: 15_000 });
    const log = await alice.readWal(channel.channelId);
    const asked = log.find((e) => e.sender_id === alice.agentId && e.event_type === 'ag2.msg.text');
    expect(asked?.event_data).toEqual({
      text: 'How long will this take?\n\n{"steps":["build","test","ship"]}',
      parts: [
        { kind: 'text', text: 'How long will this take?' },
        { kind: 'data', data: { steps: ['build', 'test', 'ship'] }, media_type: 'application/json' },
      ],
    });
    expect(model.calls[0]?.prompt).toEqual([
      { role: 'system', content: `You are bob (agent_id: ${bob.agentId}).` },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'How long will this take?' },
          { type: 'text', text: '{"steps":["build","test","ship"]}' },
        ],
      },
    ]);
  });

  it('runs a conversation between two agents until their scripts run out', async () => {
    const { client } = await kit.open();
    const aliceModel = createScriptedModel(['follow up question']);
    const bobModel = createScriptedModel(['initial reply', 'second answer']);
    const alice = await registerAgent(client, new Agent({ name: 'alice', model: aliceModel }));
    const bob = await registerAgent(client, new Agent({ name: 'bob', model: bobModel }), { attachPlugin: false });
    const channel = await alice.open({ type: 'conversation', target: 'bob' });
    await channel.send('hello bob');

    // Alice's second turn answers "" (her script is spent), which posts nothing: the exchange halts there.
    await until(() => aliceModel.calls.length === 2, "alice's second turn");
    const log = await alice.readWal(channel.channelId);
    expect(texts(log, names(alice, bob))).toEqual([
      ['alice', 'hello bob'],
      ['bob', 'initial reply'],
      ['alice', 'follow up question'],
      ['bob', 'second answer'],
    ]);
    expect(await alice.adapterState(channel.channelId)).toMatchObject({ turn_count: 4, last_speaker_id: bob.agentId });
    expect(bobModel.calls[1]?.prompt).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hello bob' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'initial reply' }] },
      { role: 'user', content: [{ type: 'text', text: 'follow up question' }] },
    ]);
    expect(toolNames(bobModel.calls[0])).toEqual(['say']);
  });

  it('runs a three-way discussion in rotation with named views', async () => {
    const { client } = await kit.open();
    const models = {
      alice: createScriptedModel(['alice 2']),
      bob: createScriptedModel(['bob 1']),
      carol: createScriptedModel(['carol 1']),
    };
    const agents: AgentClient[] = [];
    for (const [name, model] of Object.entries(models)) {
      agents.push(await registerAgent(client, new Agent({ name, model }), { attachPlugin: false }));
    }
    const [alice, bob, carol] = agents as [AgentClient, AgentClient, AgentClient];
    const channel = await alice.open({ type: 'discussion', target: ['bob', 'carol'] });
    await channel.send('alice 1');

    await until(() => models.bob.calls.length === 2, "bob's second turn");
    const log = await alice.readWal(channel.channelId);
    expect(texts(log, names(alice, bob, carol))).toEqual([
      ['alice', 'alice 1'],
      ['bob', 'bob 1'],
      ['carol', 'carol 1'],
      ['alice', 'alice 2'],
    ]);
    expect(await alice.adapterState(channel.channelId)).toMatchObject({
      expected_next_speaker: bob.agentId,
      turn_count: 4,
    });
    expect(models.bob.calls[0]?.prompt).toEqual([
      { role: 'user', content: [{ type: 'text', text: '[alice]: alice 1' }] },
    ]);
  });
});
