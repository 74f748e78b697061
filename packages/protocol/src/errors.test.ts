import { describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import {
  Ag2netError,
  AccessDeniedError,
  AuthError,
  ConflictError,
  ERROR_CODES,
  ErrorCode,
  HubError,
  InboxFull,
  InboxFullError,
  InternalError,
  InvalidRequestError,
  NetworkError,
  NotFoundError,
  ProtocolError,
  RETRYABLE_ERROR_CODES,
  UnavailableError,
  UnknownHubError,
  UnknownNetworkError,
  WIRE_ERROR_CODES,
  errorFromWire,
} from '@ag2net/protocol';
import { toHubError, toNetworkError } from '@ag2net/protocol/internal';

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
  it('names every code of ERROR_CODES once, in its order', () => {
    expect(Object.values(ErrorCode)).toEqual([...ERROR_CODES]);
  });

  it('keeps exactly the nine stable wire codes first', () => {
    expect(ERROR_CODES.slice(0, 9)).toEqual([...WIRE_ERROR_CODES]);
    expect(WIRE_ERROR_CODES).toEqual([
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
    expect(err).toBeInstanceOf(HubError);
    expect(err).toBeInstanceOf(Ag2netError);
    expect(err).toBeInstanceOf(Error);
    expect(err.retryable).toBe(code === 'unavailable');
    expect(String(err)).toBe(`${name}: it failed`);
  });

  it('names the wire base class HubError with code internal, not retryable', () => {
    const err = new HubError('base');
    expect([err.name, err.code, err.retryable]).toEqual(['HubError', 'internal', false]);
    expect(err).toBeInstanceOf(Ag2netError);
  });

  it('keeps the former names: every HubError is a NetworkError, which keeps its name when made directly', () => {
    expect(new NotFoundError('x')).toBeInstanceOf(NetworkError);
    expect(errorFromWire({ code: 'quota_exceeded', message: 'x' })).toBeInstanceOf(NetworkError);
    expect(new Ag2netError('timeout', 'x')).not.toBeInstanceOf(NetworkError);
    const old = new NetworkError('made with the old name');
    expect([old instanceof HubError, old.name, old.code, old.retryable]).toEqual([
      true,
      'NetworkError',
      'internal',
      false,
    ]);
    expect(UnknownNetworkError).toBe(UnknownHubError);
    expect(toNetworkError).toBe(toHubError);
  });

  it('gives a local error of the base class its code, retryability and wire form', () => {
    const err = new Ag2netError('timeout', 'no envelope within 50 ms', { details: { ms: 50 } });
    expect([err.name, err.code, err.retryable, err instanceof HubError]).toEqual([
      'Ag2netError',
      'timeout',
      true,
      false,
    ]);
    expect(err.toWire()).toStrictEqual({ code: 'timeout', message: 'no envelope within 50 ms', details: { ms: 50 } });
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

  it('is also reachable as HubError.fromWire', () => {
    const err = HubError.fromWire({ code: 'auth_failed', message: 'api key mismatch' });
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
    expect(err).toBeInstanceOf(UnknownHubError);
    expect(err).toBeInstanceOf(HubError);
    expect(err.name).toBe('UnknownHubError');
    expect(err.code).toBe('quota_exceeded');
    expect(err.retryable).toBe(false);
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

  it('never retries a code of another scope that arrives on the wire', () => {
    const err = errorFromWire({ code: 'timeout', message: 'a hub never says this' });
    expect([err instanceof UnknownHubError, err.code, err.retryable]).toEqual([true, 'timeout', false]);
  });
});

describe('toHubError', () => {
  it('passes a hub error through unchanged', () => {
    const err = new ProtocolError('not your turn');
    expect(toHubError(err)).toBe(err);
  });

  it('wraps a plain Error in an InternalError that keeps its message and cause', () => {
    const thrown = new TypeError('x is undefined');
    const err = toHubError(thrown);
    expect(err).toBeInstanceOf(InternalError);
    expect(err.message).toBe('x is undefined');
    expect(err.cause).toBe(thrown);
  });

  it('wraps a local error, which never crosses the wire with its own code, in an InternalError', () => {
    const local = new Ag2netError('closed', 'the inbox closed');
    const err = toHubError(local);
    expect([err instanceof InternalError, err.code, err.message, err.cause]).toEqual([
      true,
      'internal',
      'the inbox closed',
      local,
    ]);
  });

  it('wraps a thrown non-Error value using its string form', () => {
    const err = toHubError('boom');
    expect(err).toBeInstanceOf(InternalError);
    expect(err.message).toBe('boom');
    expect(err.cause).toBe('boom');
    expect(toHubError(42).message).toBe('42');
  });
});
