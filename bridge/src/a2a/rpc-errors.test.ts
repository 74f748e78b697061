import { RequestMalformedError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { AccessDeniedError, AuthError, InvalidRequestError, NotFoundError, ProtocolError } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { HttpError } from '../http-errors.js';
import { a2aErrorOf, rpcRefusal } from './rpc-errors.js';

describe('a2a errors', () => {
  it("answers the bridge's refusals with their HTTP status and a JSON-RPC error naming the bridge's code", () => {
    expect(rpcRefusal(new AuthError('sign in first'))).toEqual({
      status: 401,
      body: {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32040,
          message: 'sign in first',
          data: [
            {
              '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
              reason: 'AUTH_FAILED',
              domain: 'ag2net',
              metadata: { code: 'auth_failed' },
            },
          ],
        },
      },
    });
    expect(rpcRefusal(new HttpError('rate_limited', 'slow down')).body.error.code).toBe(-32042);
    expect(rpcRefusal(new HttpError('invalid_request', 'too big', { status: 413 })).status).toBe(413);
    expect(rpcRefusal(new Error('boom'))).toMatchObject({ status: 500, body: { error: { code: -32603 } } });
  });

  it('turns hub refusals into the A2A errors a client acts on, and leaves anything else as it is', () => {
    expect(a2aErrorOf(new ProtocolError('not your turn'))).toBeInstanceOf(UnsupportedOperationError);
    expect(a2aErrorOf(new AccessDeniedError('a rule forbids it'))).toBeInstanceOf(UnsupportedOperationError);
    expect(a2aErrorOf(new NotFoundError('gone'))).toBeInstanceOf(TaskNotFoundError);
    expect(a2aErrorOf(new InvalidRequestError('bad'))).toBeInstanceOf(RequestMalformedError);
    const other = new Error('other');
    expect(a2aErrorOf(other)).toBe(other);
  });
});
