import { describe, expect, it } from 'vitest';
import {
  ConflictError,
  ErrorReason,
  ProtocolError,
  UnavailableError,
  UnknownNetworkError,
  isFinalError,
  mayResend,
} from '@ag2net/protocol';

const mayHaveApplied = new UnavailableError('reportTurnFailure may have been applied', {
  details: { reason: ErrorReason.MayHaveApplied },
});

describe('mayResend', () => {
  it('resends an unavailable, for an operation that is not idempotent too', () => {
    const unavailable = new UnavailableError('not the active hub', { details: { reason: 'stepping_down' } });
    expect([mayResend(unavailable, { idempotent: true }), mayResend(unavailable, { idempotent: false })]).toEqual([
      true,
      true,
    ]);
  });

  it('resends an unavailable that may have been applied only for an idempotent operation', () => {
    expect([mayResend(mayHaveApplied, { idempotent: true }), mayResend(mayHaveApplied, { idempotent: false })]).toEqual(
      [true, false],
    );
  });

  it('never resends another code, a known one or one of a newer hub', () => {
    const others = [new ProtocolError("channel 'c1' is closed"), new UnknownNetworkError('rate_limited_v9', 'newer')];
    expect(others.map((err) => mayResend(err, { idempotent: true }))).toEqual([false, false]);
  });
});

describe('isFinalError', () => {
  it('is true for every wire error but a plain unavailable', () => {
    const errors = [new ConflictError('taken'), mayHaveApplied, new UnavailableError('no leader now')];
    expect(errors.map(isFinalError)).toEqual([true, true, false]);
  });

  it('is false for what is not a wire error', () => {
    expect([new Error('model down'), 'a string', undefined].map(isFinalError)).toEqual([false, false, false]);
  });
});
