import { describe, expect, it } from 'vitest';
import { Ag2netError, ERROR_CODE_INFO, ErrorScope, isErrorCode } from '@ag2net/protocol';
import { ModelCallError, ModelFailureCode, TaskCancelledError } from '@ag2net/agent';

describe('the agent package errors', () => {
  it('gives a cancelled task the code cancelled, not retryable', () => {
    const err = new TaskCancelledError('the owner cancelled it');
    expect(err).toBeInstanceOf(Ag2netError);
    expect([err.name, err.code, err.retryable, err.message]).toEqual([
      'TaskCancelledError',
      'cancelled',
      false,
      'the owner cancelled it',
    ]);
  });

  it('keeps every model failure code as the ModelCallError code, one of the model codes of ERROR_CODES', () => {
    const modelCodes = Object.entries(ERROR_CODE_INFO)
      .filter(([, info]) => info.scope === ErrorScope.Model)
      .map(([code]) => code);
    expect(Object.values(ModelFailureCode)).toEqual(modelCodes);
    for (const code of Object.values(ModelFailureCode)) {
      const err = new ModelCallError(code, 'the model failed', { attempts: 3 });
      expect(err).toBeInstanceOf(Ag2netError);
      expect(isErrorCode(err.code)).toBe(true);
      expect({ code: err.code, retryable: err.retryable }).toEqual({
        code,
        retryable: code === 'model_timeout' || code === 'model_unavailable',
      });
    }
  });

  it('keeps the provider error as the cause of a ModelCallError', () => {
    const cause = new Error('HTTP 503');
    const err = new ModelCallError(ModelFailureCode.Unavailable, 'the model is unavailable', { attempts: 3, cause });
    expect([err.cause, err.attempts, err.reason]).toEqual([cause, 3, 'the model is unavailable']);
  });
});
