import { describe, expect, it } from 'vitest';
import { Ag2netError, HubError } from '@ag2net/protocol';
import { toHubError } from '@ag2net/protocol/internal';
import { WalConflictError } from './wal.js';

describe('the hub package errors', () => {
  it('gives a WAL conflict the code conflict, not retryable, and keeps it off the wire', () => {
    const err = new WalConflictError('c1', 41);
    expect(err).toBeInstanceOf(Ag2netError);
    expect(err).not.toBeInstanceOf(HubError);
    expect([err.name, err.code, err.retryable, err.channelId, err.expectedLast]).toEqual([
      'WalConflictError',
      'conflict',
      false,
      'c1',
      41,
    ]);
    // Should one ever reach a handler boundary, the caller learns nothing of the hub's internals.
    expect(toHubError(err).toWire()).toStrictEqual({
      code: 'internal',
      message: 'another writer appended to channel c1 after stream sequence 41',
    });
  });
});
