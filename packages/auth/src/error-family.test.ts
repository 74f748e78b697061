import { describe, expect, it } from 'vitest';
import { Ag2netError } from '@ag2net/protocol';
import { IssuanceError } from '@ag2net/auth';

describe('the auth package errors', () => {
  it('gives a bad issuance request the code invalid_request, not retryable', () => {
    const err = new IssuanceError('not a user public key');
    expect(err).toBeInstanceOf(Ag2netError);
    expect([err.name, err.code, err.retryable, err.message]).toEqual([
      'IssuanceError',
      'invalid_request',
      false,
      'not a user public key',
    ]);
  });
});
