import { APICallError, LoadAPIKeyError, type LanguageModelV3, type LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { createScriptedModel } from './scripted.js';
import { ModelCallError, describeModelError, limitModel, withModelLimits } from './limits.js';

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

/** The error a limited model's `doGenerate` rejects with. */
async function failureOf(model: LanguageModelV3, options: LanguageModelV3CallOptions = callOptions): Promise<unknown> {
  return model.doGenerate(options).then(
    () => null,
    (e: unknown) => e,
  );
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

  it('gives up with the cause, the attempts and the model, the key scrubbed from the provider’s message', async () => {
    const key = 'my-configured-key-0042';
    const unauthorized = new APICallError({
      message: `Incorrect API key provided: ${key}`,
      url: 'http://127.0.0.1/v1/chat/completions',
      requestBodyValues: {},
      statusCode: 401,
      data: { error: { message: `Incorrect API key provided: ${key}`, code: 'invalid_api_key' } },
    });
    const err = await failureOf(limitModel(failingModel(unauthorized).model, { retryDelayMs: 1 }, [key]));
    expect(err instanceof ModelCallError ? [err.attempts, err.detail, err.model] : err).toEqual([
      1,
      {
        kind: 'http',
        exc_type: 'APICallError',
        status: 401,
        code: 'invalid_api_key',
        message: 'Incorrect API key provided: ***',
      },
      { provider: 'scripted', model: 'scripted' },
    ]);
  });

  it('leaves out a provider message that quotes the prompt', async () => {
    const echo = new APICallError({
      message: 'cannot parse the message: please summarise the quarterly figures',
      url: 'http://127.0.0.1/v1/chat/completions',
      requestBodyValues: {},
      statusCode: 400,
    });
    const prompt: LanguageModelV3CallOptions = {
      prompt: [{ role: 'user', content: [{ type: 'text', text: 'Please summarise the quarterly figures for me.' }] }],
    };
    const err = await failureOf(withModelLimits(failingModel(echo).model), prompt);
    expect(err instanceof ModelCallError ? [err.code, err.detail] : err).toEqual([
      'model_rejected',
      { kind: 'http', exc_type: 'APICallError', status: 400 },
    ]);
  });

  it('words a missing key and any other failure of the call, without retrying them', async () => {
    const missing = failingModel(new LoadAPIKeyError({ message: 'OpenAI API key is missing.' }));
    const noKey = await failureOf(withModelLimits(missing.model, { retryDelayMs: 1 }));
    expect(noKey instanceof ModelCallError ? [noKey.code, noKey.reason, noKey.detail?.kind] : noKey).toEqual([
      'model_auth',
      'the model has no API key',
      'config',
    ]);
    const broken = failingModel(new TypeError('Request cannot be constructed from a URL that includes credentials'));
    const other = await failureOf(withModelLimits(broken.model, { retryDelayMs: 1 }));
    expect(other instanceof ModelCallError ? [other.code, other.reason, other.detail?.exc_type] : other).toEqual([
      'model_error',
      'the model call failed (TypeError)',
      'TypeError',
    ]);
    expect([missing.calls(), broken.calls()]).toEqual([1, 1]);
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
