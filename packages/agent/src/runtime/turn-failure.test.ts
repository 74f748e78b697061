import { APICallError } from '@ai-sdk/provider';
import { NetworkError, ProtocolError } from '@ag2net/protocol';
import { RetryError } from 'ai';
import { describe, expect, it } from 'vitest';
import { ModelCallError, ModelFailureCode } from '../model/limits.js';
import { describeTurnFailure, isTransientFailure, turnFailedData } from './turn-failure.js';

describe('isTransientFailure', () => {
  it('retries a model that timed out or was unavailable, not one that refused the key or answered malformed', () => {
    const failure = (code: ModelFailureCode) => new ModelCallError(code, code, { attempts: 1 });
    expect(
      [
        ModelFailureCode.Timeout,
        ModelFailureCode.Unavailable,
        ModelFailureCode.Auth,
        ModelFailureCode.Rejected,
        ModelFailureCode.MalformedOutput,
        ModelFailureCode.Error,
      ].map((code) => isTransientFailure(failure(code))),
    ).toEqual([true, true, false, false, false, false]);
  });

  it('classifies the AI SDK errors of a model not built by createModel by their status', () => {
    const call = (statusCode: number) =>
      new APICallError({ message: 'x', url: 'u', requestBodyValues: {}, statusCode, isRetryable: statusCode >= 429 });
    expect([429, 503, 401, 400].map((s) => isTransientFailure(call(s)))).toEqual([true, true, false, false]);
  });

  it('leaves anything else to the client: a hub refusal is permanent, an unknown exception transient', () => {
    expect([isTransientFailure(new ProtocolError('not your turn')), isTransientFailure(new TypeError('x'))]).toEqual([
      false,
      true,
    ]);
  });
});

describe('describeTurnFailure', () => {
  it('takes a model failure’s code, reason, cause, attempts and model', () => {
    const err = new ModelCallError(ModelFailureCode.Unavailable, 'the model could not be reached after 3 attempts', {
      attempts: 3,
      detail: {
        kind: 'connection',
        exc_type: 'APICallError',
        code: 'ECONNREFUSED',
        message: 'ECONNREFUSED 127.0.0.1:9',
      },
      model: { provider: 'openai-compatible', model: 'llama3.2' },
    });
    expect(turnFailedData('expert', describeTurnFailure(err))).toEqual({
      agent_name: 'expert',
      reason: 'the model could not be reached after 3 attempts',
      code: 'model_unavailable',
      cause: {
        kind: 'connection',
        exc_type: 'APICallError',
        code: 'ECONNREFUSED',
        message: 'ECONNREFUSED 127.0.0.1:9',
      },
      attempts: 3,
      provider: 'openai-compatible',
      model: 'llama3.2',
    });
    // Built by hand, without a cause: AG2's three fields and the attempts.
    expect(
      turnFailedData('expert', describeTurnFailure(new ModelCallError('model_auth', 'no', { attempts: 1 }))),
    ).toEqual({
      agent_name: 'expert',
      reason: 'no',
      code: 'model_auth',
      attempts: 1,
    });
  });

  it('unwraps the AI SDK’s retries of a model it did not build, and leaves the provider’s unchecked message out', () => {
    const last = new APICallError({
      message: 'Service Unavailable: the request "tell me a secret plan" failed',
      url: 'http://127.0.0.1:1/v1/chat/completions',
      requestBodyValues: {},
      statusCode: 503,
    });
    const err = new RetryError({
      message: 'Failed after 3 attempts',
      reason: 'maxRetriesExceeded',
      errors: [last, last, last],
    });
    expect(describeTurnFailure(err)).toEqual({
      code: 'model_unavailable',
      reason: 'the model failed with HTTP 503 after 3 attempts',
      cause: { kind: 'http', exc_type: 'APICallError', status: 503 },
      attempts: 3,
    });
  });

  it('names a hub refusal by its wire code and any other error by its class, scrubbed', () => {
    const refused = Object.assign(new NetworkError('not a participant of channel c1'), { code: 'access_denied' });
    expect(describeTurnFailure(refused)).toEqual({
      code: 'turn_error',
      reason: 'the hub refused the turn (access_denied)',
      cause: {
        kind: 'hub',
        exc_type: 'NetworkError',
        code: 'access_denied',
        message: 'not a participant of channel c1',
      },
    });
    expect(describeTurnFailure(new TypeError('cannot fetch https://bob:pw@tools.example/x'))).toEqual({
      code: 'turn_error',
      reason: 'the turn failed (TypeError)',
      cause: { kind: 'error', exc_type: 'TypeError', message: 'cannot fetch https://***@tools.example/x' },
    });
  });
});
