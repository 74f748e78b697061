import { ErrorCode, NetworkError, type WireError } from '@ag2net/protocol';
import { DisconnectedError, HubUnavailableError } from '@ag2net/client';

/** HTTP status of each wire error code; a code this bridge does not know answers 500. */
const STATUS: Readonly<Record<string, number>> = {
  [ErrorCode.InvalidRequest]: 400,
  [ErrorCode.AuthFailed]: 401,
  [ErrorCode.AccessDenied]: 403,
  [ErrorCode.NotFound]: 404,
  [ErrorCode.Conflict]: 409,
  [ErrorCode.ProtocolError]: 422,
  [ErrorCode.InboxFull]: 429,
  [ErrorCode.Unavailable]: 503,
  [ErrorCode.Internal]: 500,
};

/** A refusal of the bridge itself (payload too large, too many requests), with the protocol's code where one fits. */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  readonly status: number;
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** The status and JSON body of any error a route threw: typed errors keep their code, anything else is `internal`. */
export function httpErrorOf(err: unknown): { status: number; body: { error: WireError } } {
  if (err instanceof HttpError)
    return { status: err.status, body: { error: { code: err.code, message: err.message } } };
  if (err instanceof NetworkError) return { status: STATUS[err.code] ?? 500, body: { error: err.toWire() } };
  if (err instanceof HubUnavailableError) {
    return { status: 503, body: { error: { code: ErrorCode.Unavailable, message: 'no hub answered' } } };
  }
  // The person's connection closed under the request (idle, or lost): the next request attaches again.
  if (err instanceof DisconnectedError) {
    return { status: 503, body: { error: { code: ErrorCode.Unavailable, message: 'reconnecting; retry' } } };
  }
  return { status: 500, body: { error: { code: ErrorCode.Internal, message: 'internal error' } } };
}
