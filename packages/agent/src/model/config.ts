import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { z } from 'zod';
import { limitModel, type ModelLimits } from './limits.js';
import { ScriptStepSchema } from './script.js';
import { createScriptedModel } from './scripted.js';

/** The model `modelConfigFromEnv` picks for OpenAI when `AG2NET_LLM_MODEL` is unset. */
export const DEFAULT_OPENAI_MODEL = 'gpt-4.1-mini';
/** The model `modelConfigFromEnv` picks for Anthropic when `AG2NET_LLM_MODEL` is unset. */
export const DEFAULT_ANTHROPIC_MODEL = 'claude-sonnet-4-5';

const Hosted = {
  /** The provider's model id, e.g. `gpt-4.1-mini`. */
  model: z.string().min(1),
  /** Default: the provider's usual environment variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`). */
  apiKey: z.string().min(1).optional(),
  /** Default: the provider's public endpoint. */
  baseURL: z.url().optional(),
};

/** Which language model an agent talks to; the schema of an agent's `model` setting in configuration files. */
export const ModelConfigSchema = z.discriminatedUnion('provider', [
  z.strictObject({ provider: z.literal('openai'), ...Hosted }),
  z.strictObject({ provider: z.literal('anthropic'), ...Hosted }),
  z.strictObject({
    provider: z.literal('openai-compatible'),
    model: z.string().min(1),
    apiKey: z.string().min(1).optional(),
    /** The endpoint serving `/chat/completions`, e.g. `http://127.0.0.1:11434/v1`. */
    baseURL: z.url(),
  }),
  z.strictObject({
    provider: z.literal('scripted'),
    model: z.string().min(1).default('scripted'),
    /** Replies and tool calls, one per model call (see `createScriptedModel`). */
    script: z.array(ScriptStepSchema).default([]),
    /** Start the script over once it is used up (see `createScriptedModel`). */
    loop: z.boolean().default(false),
  }),
]);
export type ModelConfig = z.infer<typeof ModelConfigSchema>;
export type ModelConfigInput = z.input<typeof ModelConfigSchema>;

/**
 * An AI SDK language model from configuration. Hosted models get `limits` (a timeout per attempt, their own retries
 * of transient failures, a `ModelCallError` when they give up); the scripted model answers at once and has none.
 * Throws a `ZodError` on an invalid configuration.
 */
export function createModel(config: ModelConfigInput, limits: ModelLimits = {}): LanguageModelV3 {
  const parsed = ModelConfigSchema.parse(config);
  switch (parsed.provider) {
    case 'openai':
      return limitModel(
        createOpenAI({ apiKey: parsed.apiKey, baseURL: parsed.baseURL })(parsed.model),
        limits,
        secretsOf(parsed, process.env['OPENAI_API_KEY']),
      );
    case 'anthropic':
      return limitModel(
        createAnthropic({ apiKey: parsed.apiKey, baseURL: parsed.baseURL })(parsed.model),
        limits,
        secretsOf(parsed, process.env['ANTHROPIC_API_KEY']),
      );
    case 'openai-compatible':
      return limitModel(
        createOpenAICompatible({
          name: 'openai-compatible',
          baseURL: parsed.baseURL,
          apiKey: parsed.apiKey,
        }).chatModel(parsed.model),
        limits,
        secretsOf(parsed, undefined),
      );
    case 'scripted':
      return createScriptedModel(parsed.script, { modelId: parsed.model, loop: parsed.loop });
    default:
      return unreachable(parsed);
  }
}

/**
 * What a hosted model's failures must never show: its key (the provider reads `envKey` when the config has none) and
 * the credentials of its base URL.
 */
function secretsOf(config: { apiKey?: string | undefined; baseURL?: string | undefined }, envKey: string | undefined) {
  const secrets = [config.apiKey, envKey];
  if (config.baseURL !== undefined) {
    const url = new URL(config.baseURL);
    secrets.push(decodeURIComponent(url.password), decodeURIComponent(url.username), url.password, url.username);
  }
  return secrets.filter((s): s is string => s !== undefined && s !== '');
}

const EnvSchema = z.looseObject({
  OPENAI_API_KEY: z.string().optional(),
  ANTHROPIC_API_KEY: z.string().optional(),
  AG2NET_LLM_BASE_URL: z.string().optional(),
  AG2NET_LLM_MODEL: z.string().optional(),
  AG2NET_LLM_API_KEY: z.string().optional(),
});

/**
 * The model configuration the environment asks for, or `null` when it names none: OpenAI when `OPENAI_API_KEY`
 * is set, else Anthropic for `ANTHROPIC_API_KEY`, else an OpenAI-compatible endpoint at `AG2NET_LLM_BASE_URL`
 * (model `AG2NET_LLM_MODEL`, required; key `AG2NET_LLM_API_KEY`, optional). `AG2NET_LLM_MODEL` also overrides
 * the default OpenAI and Anthropic models. Empty variables count as unset. Throws a `ZodError` on a malformed
 * value (a base URL that is not a URL) and a `TypeError` when the base URL comes without a model.
 */
export function modelConfigFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
): ModelConfig | null {
  const vars = EnvSchema.parse(env);
  const set = (v: string | undefined): string | undefined => (v === undefined || v === '' ? undefined : v);
  const model = set(vars.AG2NET_LLM_MODEL);
  const openaiKey = set(vars.OPENAI_API_KEY);
  if (openaiKey !== undefined) {
    return ModelConfigSchema.parse({ provider: 'openai', model: model ?? DEFAULT_OPENAI_MODEL, apiKey: openaiKey });
  }
  const anthropicKey = set(vars.ANTHROPIC_API_KEY);
  if (anthropicKey !== undefined) {
    return ModelConfigSchema.parse({
      provider: 'anthropic',
      model: model ?? DEFAULT_ANTHROPIC_MODEL,
      apiKey: anthropicKey,
    });
  }
  const baseURL = set(vars.AG2NET_LLM_BASE_URL);
  if (baseURL === undefined) return null;
  if (model === undefined) throw new TypeError('AG2NET_LLM_BASE_URL is set but AG2NET_LLM_MODEL is not');
  const apiKey = set(vars.AG2NET_LLM_API_KEY);
  return ModelConfigSchema.parse({
    provider: 'openai-compatible',
    model,
    baseURL,
    ...(apiKey === undefined ? {} : { apiKey }),
  });
}

/** The model the environment asks for (see `modelConfigFromEnv`), with `limits`, or `null`. */
export function modelFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
  limits: ModelLimits = {},
): LanguageModelV3 | null {
  const config = modelConfigFromEnv(env);
  return config === null ? null : createModel(config, limits);
}

function unreachable(value: never): never {
  throw new TypeError(`unknown model provider: ${JSON.stringify(value)}`);
}
