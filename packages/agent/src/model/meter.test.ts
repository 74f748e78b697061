import { APICallError, type LanguageModelV3, type LanguageModelV3Usage } from '@ai-sdk/provider';
import { tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from '../agent.js';
import { withModelLimits } from './limits.js';
import { toolCall } from './script.js';
import { createScriptedModel, type ScriptedModel } from './scripted.js';

/** A 503 the AI SDK retries at once (`retry-after-ms: 0`), as `createModel`'s limits retry it after `retryDelayMs`. */
function unavailable(): APICallError {
  return new APICallError({
    message: 'Service Unavailable',
    url: 'http://127.0.0.1/v1/chat/completions',
    requestBodyValues: {},
    statusCode: 503,
    responseHeaders: { 'retry-after-ms': '0' },
  });
}

/** `scripted`, failing its first `failures` calls with a 503 before answering from its script. */
function flaky(scripted: ScriptedModel, failures: number, usage?: LanguageModelV3Usage): LanguageModelV3 {
  let failed = 0;
  return {
    specificationVersion: 'v3',
    provider: scripted.provider,
    modelId: scripted.modelId,
    supportedUrls: {},
    doStream: (options) => scripted.doStream(options),
    doGenerate: async (options) => {
      if (failed < failures) {
        failed += 1;
        throw unavailable();
      }
      const result = await scripted.doGenerate(options);
      return usage === undefined ? result : { ...result, usage };
    },
  };
}

const lookup = tool({ description: 'Look it up.', inputSchema: z.object({}), execute: () => 'it' });

describe('counting model calls', () => {
  it('counts one attempt per step and the tool calls of a turn', async () => {
    const model = createScriptedModel([[toolCall('lookup'), toolCall('lookup')], 'found']);
    const result = await new Agent({ name: 'a', model, tools: { lookup } }).ask('find it');
    expect([result.attempts, result.retries, result.toolCalls]).toEqual([2, 0, 2]);
  });

  it("counts the AI SDK's retry of a model without limits as an attempt and a retry", async () => {
    const model = flaky(createScriptedModel([toolCall('lookup'), 'found']), 1);
    const result = await new Agent({ name: 'a', model, tools: { lookup } }).ask('find it');
    expect([result.text, result.attempts, result.retries, result.toolCalls]).toEqual(['found', 3, 1, 1]);
  });

  it('counts the retries of a model with limits, which the AI SDK never sees, in the turn they ran in', async () => {
    const model = withModelLimits(flaky(createScriptedModel(['found']), 2), { retryDelayMs: 0 });
    const steady = withModelLimits(createScriptedModel(['here']), { retryDelayMs: 0 });
    const [first, second] = await Promise.all([
      new Agent({ name: 'a', model }).ask('find it'),
      new Agent({ name: 'b', model: steady }).ask('and you?'),
    ]);
    expect([first.attempts, first.retries]).toEqual([3, 2]);
    expect([second.attempts, second.retries]).toEqual([1, 0]);
  });

  it('says whether the provider reported tokens', async () => {
    const none: LanguageModelV3Usage = {
      inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: undefined, text: undefined, reasoning: undefined },
    };
    const silent = await new Agent({ name: 'a', model: flaky(createScriptedModel(['x']), 0, none) }).ask('q');
    expect([silent.usageReported, silent.usage]).toEqual([false, { inputTokens: 0, outputTokens: 0 }]);
    const scripted = await new Agent({ name: 'a', model: createScriptedModel(['x']) }).ask('q');
    expect([scripted.usageReported, scripted.usage]).toEqual([true, { inputTokens: 0, outputTokens: 0 }]);
  });
});
