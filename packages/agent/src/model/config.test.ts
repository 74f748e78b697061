import { describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import {
  DEFAULT_ANTHROPIC_MODEL,
  DEFAULT_OPENAI_MODEL,
  createModel,
  modelConfigFromEnv,
  modelFromEnv,
} from './config.js';

describe('createModel', () => {
  it('builds each provider through the AI SDK', () => {
    const made = [
      createModel({ provider: 'openai', model: 'gpt-4.1-mini', apiKey: 'k' }),
      createModel({ provider: 'anthropic', model: 'claude-sonnet-4-5', apiKey: 'k' }),
      createModel({ provider: 'openai-compatible', model: 'llama3', baseURL: 'http://127.0.0.1:11434/v1' }),
      createModel({ provider: 'scripted', script: ['hi'] }),
    ];
    expect(made.map((m) => [m.specificationVersion, m.provider, m.modelId])).toEqual([
      ['v3', 'openai.responses', 'gpt-4.1-mini'],
      ['v3', 'anthropic.messages', 'claude-sonnet-4-5'],
      ['v3', 'openai-compatible.chat', 'llama3'],
      ['v3', 'ag2net.scripted', 'scripted'],
    ]);
  });

  it('refuses an OpenAI-compatible model without a base URL and an unknown provider', () => {
    expect(() => createModel({ provider: 'openai-compatible', model: 'x' } as never)).toThrow(ZodError);
    expect(() => createModel({ provider: 'mystery', model: 'x' } as never)).toThrow(ZodError);
  });
});

describe('modelConfigFromEnv', () => {
  it('picks OpenAI first, then Anthropic, then an OpenAI-compatible endpoint', () => {
    const all = {
      OPENAI_API_KEY: 'sk-o',
      ANTHROPIC_API_KEY: 'sk-a',
      AG2NET_LLM_BASE_URL: 'http://127.0.0.1:8080/v1',
      AG2NET_LLM_MODEL: 'qwen',
    };
    expect(modelConfigFromEnv(all)).toEqual({ provider: 'openai', model: 'qwen', apiKey: 'sk-o' });
    expect(modelConfigFromEnv({ ...all, OPENAI_API_KEY: '' })).toEqual({
      provider: 'anthropic',
      model: 'qwen',
      apiKey: 'sk-a',
    });
    expect(modelConfigFromEnv({ AG2NET_LLM_BASE_URL: all.AG2NET_LLM_BASE_URL, AG2NET_LLM_MODEL: 'qwen' })).toEqual({
      provider: 'openai-compatible',
      model: 'qwen',
      baseURL: 'http://127.0.0.1:8080/v1',
    });
  });

  it('uses the default OpenAI and Anthropic models when none is named', () => {
    expect(modelConfigFromEnv({ OPENAI_API_KEY: 'k' })).toEqual({
      provider: 'openai',
      model: DEFAULT_OPENAI_MODEL,
      apiKey: 'k',
    });
    expect(modelConfigFromEnv({ ANTHROPIC_API_KEY: 'k' })).toEqual({
      provider: 'anthropic',
      model: DEFAULT_ANTHROPIC_MODEL,
      apiKey: 'k',
    });
  });

  it('passes the endpoint key on and names nothing when the environment names nothing', () => {
    expect(
      modelConfigFromEnv({ AG2NET_LLM_BASE_URL: 'http://h:1/v1', AG2NET_LLM_MODEL: 'm', AG2NET_LLM_API_KEY: 'sk' }),
    ).toEqual({ provider: 'openai-compatible', model: 'm', baseURL: 'http://h:1/v1', apiKey: 'sk' });
    expect(modelConfigFromEnv({})).toBeNull();
    expect(modelFromEnv({ PATH: '/usr/bin' })).toBeNull();
  });

  it('refuses a base URL without a model and a base URL that is not a URL', () => {
    expect(() => modelConfigFromEnv({ AG2NET_LLM_BASE_URL: 'http://h:1/v1' })).toThrow(
      new TypeError('AG2NET_LLM_BASE_URL is set but AG2NET_LLM_MODEL is not'),
    );
    expect(() => modelConfigFromEnv({ AG2NET_LLM_BASE_URL: 'not a url', AG2NET_LLM_MODEL: 'm' })).toThrow(ZodError);
  });
});
