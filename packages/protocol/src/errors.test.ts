import { describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import {
  AccessDeniedError,
  AuthError,
  ConflictError,
  ErrorCode,
  InboxFull,
  InboxFullError,
  InternalError,
  InvalidRequestError,
  NetworkError,
  NotFoundError,
  ProtocolError,
  RETRYABLE_ERROR_CODES,
  UnavailableError,
  UnknownNetworkError,
  errorFromWire,
} from '@ag2net/protocol';
import { toNetworkError } from '@ag2net/protocol/internal';

const CLASSES = [
  { Class: NotFoundError, name: 'NotFoundError', code: 'not_found' },
  { Class: AccessDeniedError, name: 'AccessDeniedError', code: 'access_denied' },
  { Class: AuthError, name: 'AuthError', code: 'auth_failed' },
  { Class: ProtocolError, name: 'ProtocolError', code: 'protocol_error' },
  { Class: InboxFullError, name: 'InboxFullError', code: 'inbox_full' },
  { Class: InvalidRequestError, name: 'InvalidRequestError', code: 'invalid_request' },
  { Class: InternalError, name: 'InternalError', code: 'internal' },
  { Class: ConflictError, name: 'ConflictError', code: 'conflict' },
  { Class: UnavailableError, name: 'UnavailableError', code: 'unavailable' },
] as const;

describe('ErrorCode', () => {
  it('holds exactly the nine stable wire codes', () => {
    expect(Object.values(ErrorCode)).toEqual([
      'not_found',
      'access_denied',
      'auth_failed',
      'protocol_error',
      'inbox_full',
      'invalid_request',
      'internal',
      'conflict',
      'unavailable',
    ]);
  });
});

describe('network error classes', () => {
  it.each(CLASSES)('$name has name $name and code $code', ({ Class, name, code }) => {
    const err = new Class('it failed');
    expect(err.name).toBe(name);
    expect(err.code).toBe(code);
    expect(err.message).toBe('it failed');
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toBeInstanceOf(Error);
    expect(String(err)).toBe(`${name}: it failed`);
  });

  it('names the base class NetworkError with code internal', () => {
    const err = new NetworkError('base');
    expect(err.name).toBe('NetworkError');
    expect(err.code).toBe('internal');
  });

  it('exports AG2 name InboxFull as an alias of InboxFullError', () => {
    expect(InboxFull).toBe(InboxFullError);
  });

  it('keeps the cause it was given and sets none otherwise', () => {
    const cause = new Error('socket closed');
    expect(new NotFoundError('x', { cause }).cause).toBe(cause);
    expect('cause' in new NotFoundError('x')).toBe(false);
  });

  it('keeps details in a readonly field and leaves them undefined when absent', () => {
    expect(new AccessDeniedError('denied', { details: { rule: 'outbound_to' } }).details).toEqual({
      rule: 'outbound_to',
    });
    expect(new AccessDeniedError('denied').details).toBeUndefined();
  });
});

describe('toWire', () => {
  it('writes code and message only when there are no details', () => {
    expect(new NotFoundError("unknown agent 'bob'").toWire()).toStrictEqual({
      code: 'not_found',
      message: "unknown agent 'bob'",
    });
  });

  it('copies details into the wire form', () => {
    const details = { agent_id: 'bob', max_pending: 1000 };
    const wire = new InboxFullError('inbox full', { details }).toWire();
    expect(wire).toStrictEqual({
      code: 'inbox_full',
      message: 'inbox full',
      details: { agent_id: 'bob', max_pending: 1000 },
    });
    expect(wire.details).not.toBe(details);
  });

  it('never puts the cause on the wire', () => {
    expect(new ProtocolError('bad turn', { cause: new Error('secret') }).toWire()).toStrictEqual({
      code: 'protocol_error',
      message: 'bad turn',
    });
  });
});

describe('errorFromWire', () => {
  it.each(CLASSES)('rebuilds $name from code $code with its message and details', ({ Class, name, code }) => {
    const original = new Class(`${code} happened`, { details: { id: 'c1', n: 2 } });
    const rebuilt = errorFromWire(original.toWire());
    expect(rebuilt).toBeInstanceOf(Class);
    expect(rebuilt.name).toBe(name);
    expect(rebuilt.code).toBe(code);
    expect(rebuilt.message).toBe(`${code} happened`);
    expect(rebuilt.details).toEqual({ id: 'c1', n: 2 });
    expect(rebuilt.toWire()).toStrictEqual(original.toWire());
  });

  it.each(CLASSES)('round-trips $name without details to a wire form without details', ({ Class }) => {
    const wire = new Class('plain').toWire();
    expect(errorFromWire(wire).toWire()).toStrictEqual(wire);
    expect(errorFromWire(wire).details).toBeUndefined();
  });

  it('is also reachable as NetworkError.fromWire', () => {
    const err = NetworkError.fromWire({ code: 'auth_failed', message: 'api key mismatch' });
    expect(err).toBeInstanceOf(AuthError);
    expect(err.message).toBe('api key mismatch');
  });

  it.each([
    ['null', null],
    ['a string', 'boom'],
    ['a missing message', { code: 'not_found' }],
    ['a missing code', { message: 'x' }],
    ['a non-object details', { code: 'internal', message: 'x', details: ['a'] }],
  ])('turns %s into InternalError "malformed error response" with the parse error as cause', (_label, wire) => {
    const err = errorFromWire(wire);
    expect(err).toBeInstanceOf(InternalError);
    expect(err.code).toBe('internal');
    expect(err.message).toBe('malformed error response');
    expect(err.cause).toBeInstanceOf(ZodError);
  });
});

describe('errorFromWire with a code this version does not know', () => {
  it('keeps the code, message and details of an unknown code', () => {
    const err = errorFromWire({ code: 'quota_exceeded', message: 'too many', details: { limit: 3 } });
    expect(err).toBeInstanceOf(UnknownNetworkError);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.code).toBe('quota_exceeded');
    expect(err.message).toBe('too many');
    expect(err.details).toStrictEqual({ limit: 3 });
    expect(err.toWire()).toStrictEqual({ code: 'quota_exceeded', message: 'too many', details: { limit: 3 } });
  });

  it("keeps AG2's generic code error as its code", () => {
    expect(errorFromWire({ code: 'error', message: 'x' }).code).toBe('error');
  });

  it('marks only unavailable as retryable', () => {
    expect(RETRYABLE_ERROR_CODES).toStrictEqual(['unavailable']);
  });
});

describe('toNetworkError', () => {
  it('passes a network error through unchanged', () => {
    const err = new ProtocolError('not your turn');
    expect(toNetworkError(err)).toBe(err);
  });

  it('wraps a plain Error in an InternalError that keeps its message and cause', () => {
    const thrown = new TypeError('x is undefined');
    const err = toNetworkError(thrown);
    expect(err).toBeInstanceOf(InternalError);
    expect(err.message).toBe('x is undefined');
    expect(err.cause).toBe(thrown);
  });

  it('wraps a thrown non-Error value using its string form', () => {
    const err = toNetworkError('boom');
    expect(err).toBeInstanceOf(InternalError);
    expect(err.message).toBe('boom');
    expect(err.cause).toBe('boom');
    expect(toNetworkError(42).message).toBe('42');
  });
});
