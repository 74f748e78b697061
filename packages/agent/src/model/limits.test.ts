import { APICallError, type LanguageModelV3, type LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { createScriptedModel } from './scripted.js';
import { ModelCallError, describeModelError, withModelLimits } from './limits.js';

function apiError(statusCode: number | undefined): APICallError {
  return new APICallError({
    message: 'request failed',
    url: 'http://127.0.0.1/v1/chat/completions',
    requestBodyValues: { messages: ['the whole prompt'] },
    ...(statusCode === undefined ? {} : { statusCode }),
    ...(statusCode === undefined ? { isRetryable: true } : {}),
  });
}

/** A model whose every call throws `error`, counting the calls. */
function failingModel(error: Error): { model: LanguageModelV3; calls: () => number } {
  const inner = createScriptedModel([]);
  let calls = 0;
  const model: LanguageModelV3 = {
    ...inner,
    specificationVersion: 'v3',
    provider: inner.provider,
    modelId: inner.modelId,
    supportedUrls: inner.supportedUrls,
    doGenerate: () => {
      calls += 1;
      return Promise.reject(error);
    },
    doStream: () => Promise.reject(error),
  };
  return { model, calls: () => calls };
}

const callOptions: LanguageModelV3CallOptions = { prompt: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] };

describe('model limits', () => {
  it('words each kind of provider failure in one sentence with a stable code', () => {
    expect(describeModelError(apiError(401))).toEqual({ code: 'model_auth', reason: 'the model rejected the API key' });
    expect(describeModelError(apiError(403))?.code).toBe('model_auth');
    expect(describeModelError(apiError(500), 3)).toEqual({
      code: 'model_unavailable',
      reason: 'the model failed with HTTP 500 after 3 attempts',
    });
    expect(describeModelError(apiError(undefined), 1)).toEqual({
      code: 'model_unavailable',
      reason: 'the model could not be reached after 1 attempt',
    });
    expect(describeModelError(apiError(200))).toEqual({
      code: 'model_malformed_output',
      reason: 'the model returned malformed output',
    });
    expect(describeModelError(apiError(400))).toEqual({
      code: 'model_rejected',
      reason: 'the model rejected the request (HTTP 400)',
    });
    expect(describeModelError(new Error('hub down'))).toBeNull();
  });

  it('retries a transient failure max_retries times, then gives up with a ModelCallError', async () => {
    const { model, calls } = failingModel(apiError(503));
    const limited = withModelLimits(model, { maxRetries: 2, retryDelayMs: 1 });
    const err: unknown = await limited.doGenerate(callOptions).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ModelCallError);
    expect(err instanceof ModelCallError ? [err.code, err.reason, err.attempts] : null).toEqual([
      'model_unavailable',
      'the model failed with HTTP 503 after 3 attempts',
      3,
    ]);
    expect(calls()).toBe(3);
  });

  it('does not retry a rejected key', async () => {
    const { model, calls } = failingModel(apiError(401));
    await expect(withModelLimits(model, { maxRetries: 2, retryDelayMs: 1 }).doGenerate(callOptions)).rejects.toThrow(
      'the model rejected the API key',
    );
    expect(calls()).toBe(1);
  });

  it('passes the caller’s own abort through unchanged and makes no further attempt', async () => {
    const cancel = new AbortController();
    const reason = new Error('turn cancelled');
    cancel.abort(reason);
    const { model, calls } = failingModel(reason);
    const limited = withModelLimits(model, { maxRetries: 2, retryDelayMs: 1 });
    await expect(limited.doGenerate({ ...callOptions, abortSignal: cancel.signal })).rejects.toBe(reason);
    expect(calls()).toBe(1);
  });
});
