import { TransitionGraph, WorkflowAdapter } from '@ag2net/adapters';
import { EV_PACKET, handoff } from '@ag2net/protocol';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { channelFor } from '../test/fixtures.js';
import { Agent } from './agent.js';
import { toolCall } from './model/script.js';
import { createScriptedModel } from './model/scripted.js';

const transfer = tool({
  description: 'Hand the customer to billing.',
  inputSchema: z.object({ reason: z.string() }),
  execute: ({ reason }) => handoff('billing', reason),
});

describe('Agent.ask', () => {
  it('sends the preamble, instructions and history summary as system, the history and the input as messages', async () => {
    const model = createScriptedModel(['hello carol']);
    const agent = new Agent({ name: 'bob', instructions: 'Be brief.', model });
    const result = await agent.ask('how are you?', {
      preamble: ['You are bob (agent_id: b1).'],
      history: [
        { role: 'system', content: 'Earlier in this channel: 2 messages from carol.' },
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hey' },
      ],
    });
    expect(result).toEqual({
      text: 'hello carol',
      events: [],
      usage: { inputTokens: 0, outputTokens: 0 },
      usageReported: true,
      attempts: 1,
      retries: 0,
      toolCalls: 0,
    });
    expect(model.calls[0]?.prompt).toEqual([
      { role: 'system', content: 'You are bob (agent_id: b1).' },
      { role: 'system', content: 'Be brief.' },
      { role: 'system', content: 'Earlier in this channel: 2 messages from carol.' },
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'hey' }] },
      { role: 'user', content: [{ type: 'text', text: 'how are you?' }] },
    ]);
    expect(model.calls[0]?.tools).toBeUndefined();
  });

  it("reports the turn's tool calls and results as turn events, in emission order", async () => {
    const model = createScriptedModel([toolCall('transfer', { reason: 'double charge' }), 'Billing will help you.']);
    const agent = new Agent({ name: 'triage', model, tools: { transfer } });
    const result = await agent.ask('I was charged twice');
    expect(result.text).toBe('Billing will help you.');
    expect(result.events).toEqual([
      { type: 'tool_call', callId: 'call_1', name: 'transfer', arguments: '{"reason":"double charge"}' },
      {
        type: 'tool_result',
        callId: 'call_1',
        result: { kind: 'handoff', target: 'billing', reason: 'double charge' },
      },
    ]);
  });

  it('routes a handoff result into the workflow packet the adapter builds', async () => {
    const model = createScriptedModel([toolCall('transfer', { reason: 'double charge' }), 'Over to billing.']);
    const reply = await new Agent({ name: 'triage', model, tools: { transfer } }).ask('charged twice');
    const adapter = new WorkflowAdapter();
    const graph = new TransitionGraph({ initialSpeaker: 'T1', transitions: [] });
    const metadata = channelFor(adapter, 'T1', ['B1'], { graph: graph.toDict() });
    const out = adapter.buildRoundEnvelope({
      metadata,
      senderId: 'T1',
      reply: { body: reply.text },
      events: reply.events,
      state: adapter.initialState(metadata),
      nameToId: new Map([['billing', 'B1']]),
    });
    expect(out?.event_type).toBe(EV_PACKET);
    expect(out?.event_data).toEqual({
      routing: { kind: 'handoff', tool: 'transfer', reason: 'double charge', target: 'B1' },
      context_updates: { set: {}, delete: [] },
      body: 'Over to billing.',
    });
  });

  it('reports a tool that threw as an "Error: …" result and lets the model go on', async () => {
    const model = createScriptedModel([toolCall('explode'), 'Sorry, that failed.']);
    const explode = tool({
      inputSchema: z.object({}),
      execute: (): string => {
        throw new Error('boom');
      },
    });
    const result = await new Agent({ name: 'a', model, tools: { explode } }).ask('go');
    expect(result).toEqual({
      text: 'Sorry, that failed.',
      events: [
        { type: 'tool_call', callId: 'call_1', name: 'explode', arguments: '{}' },
        { type: 'tool_result', callId: 'call_1', result: 'Error: boom' },
      ],
      usage: { inputTokens: 0, outputTokens: 0 },
      usageReported: true,
      attempts: 2,
      retries: 0,
      toolCalls: 1,
    });
  });

  it("gives a turn's tools precedence over the agent's own of the same name", async () => {
    const model = createScriptedModel([toolCall('who'), 'ok']);
    const who = (answer: string) => tool({ inputSchema: z.object({}), execute: () => answer });
    const result = await new Agent({ name: 'a', model, tools: { who: who('agent') } }).ask('x', {
      tools: { who: who('turn') },
    });
    expect(result.events[1]).toEqual({ type: 'tool_result', callId: 'call_1', result: 'turn' });
  });

  it('stops after maxSteps model calls', async () => {
    const model = createScriptedModel([toolCall('who'), toolCall('who'), 'never reached']);
    const who = tool({ inputSchema: z.object({}), execute: () => 'me' });
    const result = await new Agent({ name: 'a', model, tools: { who }, maxSteps: 2 }).ask('x');
    expect(model.calls).toHaveLength(2);
    expect(result.text).toBe('');
    expect(result.events.filter((e) => e.type === 'tool_call')).toHaveLength(2);
  });

  it('sums the model tokens the provider reports over the steps of a turn', async () => {
    const scripted = createScriptedModel([toolCall('lookup'), 'found']);
    let call = 0;
    // The scripted model reports no usage: this one reports 10 + n input and 3 output tokens on its n-th call.
    const model: LanguageModelV3 = {
      ...scripted,
      specificationVersion: 'v3',
      provider: scripted.provider,
      modelId: scripted.modelId,
      supportedUrls: {},
      doStream: (options) => scripted.doStream(options),
      doGenerate: async (options) => {
        call += 1;
        const result = await scripted.doGenerate(options);
        return {
          ...result,
          usage: {
            inputTokens: { total: 10 + call, noCache: 10 + call, cacheRead: 0, cacheWrite: 0 },
            outputTokens: { total: 3, text: 3, reasoning: 0 },
          },
        };
      },
    };
    const lookup = tool({ description: 'Look it up.', inputSchema: z.object({}), execute: () => 'it' });
    const result = await new Agent({ name: 'a', model, tools: { lookup } }).ask('find it');
    expect([result.text, result.usage]).toEqual(['found', { inputTokens: 23, outputTokens: 6 }]);
  });
});
