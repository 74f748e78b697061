import { RequestMalformedError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { ErrorCode, HubError } from '@ag2net/protocol';
import { httpErrorOf } from '../http-errors.js';

/** `google.rpc.ErrorInfo`'s type, as A2A carries it in an error's `data`. */
const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';

/**
 * JSON-RPC codes of the bridge's own refusals, those made before a request reaches A2A (no token, too many requests,
 * a body too large or too deep): `invalid_request` is JSON-RPC's own; the others are in the range JSON-RPC leaves to
 * implementations, beside A2A's (-32001 … -32009).
 */
export const BRIDGE_RPC_CODES: Readonly<Record<string, number>> = {
  [ErrorCode.InvalidRequest]: -32600,
  [ErrorCode.AuthFailed]: -32040,
  [ErrorCode.AccessDenied]: -32041,
  [ErrorCode.RateLimited]: -32042,
  [ErrorCode.NotFound]: -32044,
  [ErrorCode.Unavailable]: -32053,
};

/** The JSON-RPC error response (and HTTP status) of a refusal made before dispatch, the bridge's code in `data`. */
export function rpcRefusal(err: unknown): {
  status: number;
  body: { jsonrpc: '2.0'; id: null; error: { code: number; message: string; data: unknown[] } };
} {
  const { status, body } = httpErrorOf(err);
  const { code, message } = body.error;
  const info = { '@type': ERROR_INFO_TYPE, reason: code.toUpperCase(), domain: 'ag2net', metadata: { code } };
  return {
    status,
    body: { jsonrpc: '2.0', id: null, error: { code: BRIDGE_RPC_CODES[code] ?? -32603, message, data: [info] } },
  };
}

/**
 * A hub refusal as the A2A error a client can act on: a bad request is malformed; one the channel's protocol, state
 * or the caller's rules refuse is an unsupported operation; a missing thing is not-found (reads by id have answered
 * not-found for what the caller may not see before this); anything else is left as it is (an internal error).
 */
export function a2aErrorOf(err: unknown): unknown {
  if (!(err instanceof HubError)) return err;
  switch (err.code) {
    case ErrorCode.InvalidRequest:
      return new RequestMalformedError({ message: err.message, cause: err });
    case ErrorCode.ProtocolError:
    case ErrorCode.Conflict:
    case ErrorCode.InboxFull:
    case ErrorCode.AccessDenied:
      return new UnsupportedOperationError({ message: err.message, cause: err });
    case ErrorCode.NotFound:
      return new TaskNotFoundError({ message: 'not found for this caller', cause: err });
    default:
      return err;
  }
}
