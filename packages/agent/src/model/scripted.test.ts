import { generateText, streamText, stepCountIs, tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { ZodError, z } from 'zod';
import { toolCall } from './script.js';
import { createScriptedModel } from './scripted.js';

describe('scripted model', () => {
  it('answers each call with the next reply, keeps one cursor across turns and answers "" when exhausted', async () => {
    const model = createScriptedModel(['first', 'second']);
    const ask = async (prompt: string): Promise<string> => (await generateText({ model, prompt })).text;
    expect(await ask('a')).toBe('first');
    expect(await ask('b')).toBe('second');
    expect(model.remaining).toBe(0);
    expect(await ask('c')).toBe('');
    expect(await ask('d')).toBe('');
    expect(model.calls.map((c) => c.prompt.at(-1))).toEqual(
      ['a', 'b', 'c', 'd'].map((p) => ({ role: 'user', content: [{ type: 'text', text: p }] })),
    );
  });

  it('with loop, starts the script over once it is used up, tool calls included, and answers "" for an empty one', async () => {
    const model = createScriptedModel([toolCall('ping'), 'pinged'], { loop: true });
    const tools = { ping: tool({ inputSchema: z.object({}), execute: () => 'pong' }) };
    const turn = async (prompt: string) => generateText({ model, prompt, tools, stopWhen: stepCountIs(5) });
    for (const prompt of ['a', 'b', 'c']) {
      const result = await turn(prompt);
      expect(result.text).toBe('pinged');
      expect(result.steps.map((s) => s.toolCalls.map((c) => c.toolName))).toEqual([['ping'], []]);
    }
    expect(model.calls).toHaveLength(6);
    expect(model.remaining).toBe(0);
    const empty = createScriptedModel([], { loop: true });
    expect((await generateText({ model: empty, prompt: 'x' })).text).toBe('');
    expect((await generateText({ model: empty, prompt: 'y' })).text).toBe('');
  });

  it('makes a tool call, which the AI SDK executes before taking the next step', async () => {
    const model = createScriptedModel([toolCall('add', { a: 2, b: 2 }), 'The sum is 4.']);
    const result = await generateText({
      model,
      prompt: 'what is 2+2?',
      tools: { add: tool({ inputSchema: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b }) },
      stopWhen: stepCountIs(5),
    });
    expect(result.text).toBe('The sum is 4.');
    expect(result.steps.map((s) => s.finishReason)).toEqual(['tool-calls', 'stop']);
    expect(result.steps[0]?.toolCalls.map((c) => [c.toolCallId, c.toolName, c.input])).toEqual([
      ['call_1', 'add', { a: 2, b: 2 }],
    ]);
    expect(result.steps[0]?.toolResults.map((r) => r.output)).toEqual([4]);
    expect(model.calls[1]?.prompt.at(-1)).toEqual({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'add', output: { type: 'json', value: 4 } }],
    });
  });

  it('makes several tool calls in one step', async () => {
    const model = createScriptedModel([[toolCall('ping'), toolCall('ping', { n: 2 })], 'done']);
    const result = await generateText({
      model,
      prompt: 'go',
      tools: {
        ping: tool({ inputSchema: z.object({ n: z.number().optional() }), execute: ({ n }) => `pong ${n ?? 1}` }),
      },
      stopWhen: stepCountIs(5),
    });
    expect(result.steps[0]?.toolResults.map((r) => [r.toolCallId, r.output])).toEqual([
      ['call_1', 'pong 1'],
      ['call_2', 'pong 2'],
    ]);
    expect(result.text).toBe('done');
  });

  it('streams the same script', async () => {
    const model = createScriptedModel(['streamed reply']);
    const result = streamText({ model, prompt: 'x' });
    expect(await result.text).toBe('streamed reply');
  });

  it('refuses a malformed step', () => {
    expect(() => createScriptedModel([{ tool: '' }])).toThrow(ZodError);
    expect(() => createScriptedModel([{ tool: 'x', extra: 1 } as never])).toThrow(ZodError);
  });
});
