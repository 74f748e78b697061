import { tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from './agent.js';
import { toolCall } from './model/script.js';
import { createScriptedModel } from './model/scripted.js';
import { turnEventsOf } from './turn-events.js';

describe('turn events', () => {
  it('reports a call of an unknown tool with the error the model was told', async () => {
    const model = createScriptedModel([toolCall('nope', { a: 1 }), 'end']);
    const known = tool({ inputSchema: z.object({}), execute: () => 1 });
    const result = await new Agent({ name: 'a', model, tools: { known } }).ask('x');
    expect(result.events).toEqual([
      { type: 'tool_call', callId: 'call_1', name: 'nope', arguments: '{"a":1}' },
      {
        type: 'tool_result',
        callId: 'call_1',
        result: "Error: Model tried to call unavailable tool 'nope'. Available tools: known.",
      },
    ]);
  });

  it('keeps calls and results of several steps in order and ignores text', () => {
    const events = turnEventsOf([
      {
        content: [
          { type: 'text', text: 'thinking' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'a', input: { x: 1 } },
          { type: 'tool-result', toolCallId: 'c1', toolName: 'a', input: { x: 1 }, output: 'A' },
        ],
      },
      {
        content: [
          { type: 'tool-call', toolCallId: 'c2', toolName: 'b', input: {} },
          { type: 'tool-error', toolCallId: 'c2', toolName: 'b', input: {}, error: 'plain string' },
        ],
      },
    ]);
    expect(events).toEqual([
      { type: 'tool_call', callId: 'c1', name: 'a', arguments: '{"x":1}' },
      { type: 'tool_result', callId: 'c1', result: 'A' },
      { type: 'tool_call', callId: 'c2', name: 'b', arguments: '{}' },
      { type: 'tool_result', callId: 'c2', result: 'Error: plain string' },
    ]);
  });
});
