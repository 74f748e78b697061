import { EV_TEXT } from '@ag2net/protocol';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Agent, createScriptedModel, registerAgent, toolCall } from '../src/index.js';
import { netKit, texts, until } from './support.js';

const kit = netKit();
beforeAll(() => kit.start());
afterEach(() => kit.closeAll());
afterAll(() => kit.stop());

describe('delegate end to end', () => {
  it("consults bob in a consulting channel mid-turn and answers with bob's reply", async () => {
    const { client } = await kit.open();
    const carol = await client.registerHuman({ name: 'carol' });
    const aliceModel = createScriptedModel([
      toolCall('delegate', { target: 'bob', prompt: 'what is 2+2?' }),
      'The answer is 4.',
    ]);
    const bobModel = createScriptedModel(['4']);
    const alice = await registerAgent(client, new Agent({ name: 'alice', model: aliceModel }));
    const bob = await registerAgent(client, new Agent({ name: 'bob', model: bobModel }));
    const names = { [alice.agentId]: 'alice', [bob.agentId]: 'bob', [carol.agentId]: 'carol' };

    const conversation = await carol.open({ type: 'conversation', target: 'alice' });
    await conversation.send('please ask bob');
    const answer = await carol.nextEnvelope({
      predicate: (e) => e.event_type === EV_TEXT && e.sender_id === alice.agentId,
      timeout: 15_000,
    });
    expect(answer?.event_data['text']).toBe('The answer is 4.');
    // The delegation is one tool call of alice's turn, which took two model calls.
    expect(answer?.event_data['turn']).toMatchObject({ attempts: 2, retries: 0, tool_calls: 1 });

    // The model saw the tool's result: bob's reply.
    expect(aliceModel.calls[1]?.prompt.at(-1)).toEqual({
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'call_1', toolName: 'delegate', output: { type: 'text', value: '4' } },
      ],
    });
    const consulting = await until(async () => {
      const channels = await bob.listChannels({ agent_id: bob.agentId });
      const found = channels.find((c) => c.manifest.type === 'consulting');
      return found?.state === 'closed' ? found : undefined;
    }, 'the consulting channel to close');
    expect([consulting.creator_id, consulting.close_reason]).toEqual([alice.agentId, 'consulting_complete']);
    const log = await alice.readWal(consulting.channel_id);
    expect(texts(log, names)).toEqual([
      ['alice', 'what is 2+2?'],
      ['bob', '4'],
    ]);
    const prompt = log.find((e) => e.event_type === EV_TEXT && e.sender_id === alice.agentId);
    expect([prompt?.audience, prompt?.depth]).toEqual([[bob.agentId], 1]);
    expect(texts(await carol.readWal(conversation.channelId), names)).toEqual([
      ['carol', 'please ask bob'],
      ['alice', 'The answer is 4.'],
    ]);
    // Bob's reply went to the waiting tool, not to an LLM turn of alice's.
    expect(aliceModel.calls).toHaveLength(2);
  });
});
