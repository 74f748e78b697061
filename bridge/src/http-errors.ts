import {
  Ag2netError,
  ErrorCode,
  HubError,
  httpStatusOf,
  type Ag2netErrorOptions,
  type WireError,
} from '@ag2net/protocol';
import { DisconnectedError } from '@ag2net/client';

/**
 * The finer statuses HTTP has for an `invalid_request` the bridge refuses itself; every other refusal answers the
 * status of its code (`httpStatusOf`).
 */
export const InvalidRequestStatus = {
  MethodNotAllowed: 405,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
} as const;
export type InvalidRequestStatus = (typeof InvalidRequestStatus)[keyof typeof InvalidRequestStatus];

/** Options of `HttpError`. */
export interface HttpErrorOptions extends Ag2netErrorOptions {
  /** One of `InvalidRequestStatus`, for an `invalid_request` only; default the code's status. */
  readonly status?: InvalidRequestStatus;
}

/** A refusal of the bridge itself (too many requests, a body too large, no such route), with its code. */
export class HttpError extends Ag2netError {
  override readonly name = 'HttpError';
  /** `httpStatusOf(code)`, or the finer status of an `invalid_request`. */
  readonly status: number;

  constructor(code: ErrorCode, message: string, options: HttpErrorOptions = {}) {
    super(code, message, options);
    this.status = code === ErrorCode.InvalidRequest ? (options.status ?? httpStatusOf(code)) : httpStatusOf(code);
  }
}

/**
 * The status and JSON body of any error a route threw: every ag2net error answers its code with the code's status
 * (`httpStatusOf`; a hub's code this bridge does not know answers 500), anything else is `internal` with a fixed
 * message, since its text may name files or keys.
 */
export function httpErrorOf(err: unknown): { status: number; body: { error: WireError } } {
  if (err instanceof HttpError) return { status: err.status, body: { error: err.toWire() } };
  if (err instanceof HubError) return { status: httpStatusOf(err.code), body: { error: err.toWire() } };
  // The person's connection closed under the request (idle, or lost): the next request attaches again.
  if (err instanceof DisconnectedError) return answer(err.code, 'reconnecting; retry');
  if (err instanceof Ag2netError) return answer(err.code, err.message);
  return answer(ErrorCode.Internal, 'internal error');
}

function answer(code: string, message: string): { status: number; body: { error: WireError } } {
  return { status: httpStatusOf(code), body: { error: { code, message } } };
}
