import { describe, expect, it } from 'vitest';
import { Ag2netError, isErrorCode } from '@ag2net/protocol';
import { A2aAnswerTooLargeError, A2aHttpError, A2aProtocolError, A2aTaskEndedError } from './a2a/errors.js';
import { A2aHeaderError } from './a2a/options.js';
import { RunnerConfigError } from './config.js';

describe('the agent runner errors', () => {
  it.each([
    [new RunnerConfigError('agents: declare at least one agent'), 'RunnerConfigError', 'invalid_config', false],
    [
      new A2aHeaderError('x-key', 'header x-key: environment variable KEY is not set'),
      'A2aHeaderError',
      'invalid_config',
      false,
    ],
    [new A2aAnswerTooLargeError(1024), 'A2aAnswerTooLargeError', 'model_malformed_output', false],
    [new A2aTaskEndedError('failed', ''), 'A2aTaskEndedError', 'model_error', false],
    [new A2aProtocolError('unexpected stream event'), 'A2aProtocolError', 'model_malformed_output', false],
  ] as const)('%s is an Ag2netError with name %s, code %s, retryable %s', (err, name, code, retryable) => {
    expect(err).toBeInstanceOf(Ag2netError);
    expect([err.name, err.code, err.retryable]).toEqual([name, code, retryable]);
  });

  it('gives an HTTP error of an A2A endpoint the model failure of its status', () => {
    const statuses = [401, 403, 404, 408, 429, 500, 503];
    expect(statuses.map((s) => [s, new A2aHttpError(s).code, new A2aHttpError(s).retryable])).toEqual([
      [401, 'model_auth', false],
      [403, 'model_auth', false],
      [404, 'model_rejected', false],
      [408, 'model_unavailable', true],
      [429, 'model_unavailable', true],
      [500, 'model_unavailable', true],
      [503, 'model_unavailable', true],
    ]);
    for (const s of statuses) expect(isErrorCode(new A2aHttpError(s).code)).toBe(true);
  });
});
