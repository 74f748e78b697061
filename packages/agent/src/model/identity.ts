import type { LanguageModelV3 } from '@ai-sdk/provider';

/**
 * Which model answers, as an agent's passport names it (`provider`, `model`), so that people can tell a scripted
 * agent from one on a real model: `scripted` for the scripted model, `openai`, `anthropic`, `openai-compatible` for
 * `createModel`'s providers, the first part of the AI SDK's provider id for any other (`google.generative-ai` is
 * `google`); `model` is the model id (`gpt-4.1-mini`, `scripted`).
 */
export function modelIdentity(model: Pick<LanguageModelV3, 'provider' | 'modelId'>): {
  provider: string;
  model: string;
} {
  // The AI SDK's provider ids are `<provider>.<api>` (`openai.responses`); ours are `ag2net.<model>`.
  const [head = '', tail = ''] = model.provider.split('.', 2);
  const provider = head === 'ag2net' && tail !== '' ? tail : head;
  return { provider: provider === '' ? model.provider : provider, model: model.modelId };
}
