import { describe, expect, it } from 'vitest';
import { Ag2netError, exitCodeOf } from '@ag2net/protocol';
import { ConfigError } from '@ag2net/telemetry';

describe('the telemetry package errors', () => {
  it('gives bad configuration the code invalid_config, not retryable, exit 2', () => {
    const err = new ConfigError('--port: expected a number');
    expect(err).toBeInstanceOf(Ag2netError);
    expect([err.name, err.code, err.retryable, exitCodeOf(err.code)]).toEqual([
      'ConfigError',
      'invalid_config',
      false,
      2,
    ]);
  });
});
