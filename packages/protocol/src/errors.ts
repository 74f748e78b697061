import { z } from 'zod';

/** The stable error codes that cross the wire. Clients switch on these, never on messages. */
export const ErrorCode = {
  NotFound: 'not_found',
  AccessDenied: 'access_denied',
  AuthFailed: 'auth_failed',
  ProtocolError: 'protocol_error',
  InboxFull: 'inbox_full',
  InvalidRequest: 'invalid_request',
  Internal: 'internal',
  /** Another write got there first (an envelope id already used in the channel by someone else). */
  Conflict: 'conflict',
  /** The hub cannot serve the request right now (storage unavailable, stepping down); retry it. */
  Unavailable: 'unavailable',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * Machine-readable reasons in an error's `details.reason`, for callers that must tell two errors of one code apart
 * (never by message text).
 */
export const ErrorReason = {
  /** `register`: the name belongs to another identity (`details.agent_id`). */
  NameTaken: 'name_taken',
  /**
   * `access_denied`: the caller is no registered identity the hub serves (never registered, unregistered, or revoked
   * by the operator, which are told apart to nobody).
   */
  UnknownCaller: 'unknown_caller',
  /** `auth_failed`: the connection's JWT was replaced by newer credentials of the identity; reconnect with those. */
  CredentialsRetired: 'credentials_retired',
  /**
   * `unavailable`: the hub could not finish an operation that is not idempotent and cannot tell whether it took
   * effect (a NATS request of it timed out). Clients do not resend it; the caller decides.
   */
  MayHaveApplied: 'may_have_applied',
  /**
   * `not_found` of `readWal` or `adapterState`: the channel's history expired (removed by the hub's history
   * retention), `details.channel_id` and `details.expired_at`; its metadata stays readable.
   */
  HistoryExpired: 'expired',
} as const;
export type ErrorReason = (typeof ErrorReason)[keyof typeof ErrorReason];

/** The codes a client may retry with the same request: the hub did nothing with it. */
export const RETRYABLE_ERROR_CODES: readonly string[] = [ErrorCode.Unavailable];

/**
 * An error as it travels in an RPC response. The set of codes is open: a client that meets a code it does not know
 * keeps it (a newer hub may send one) and treats it like `internal`.
 */
export const WireErrorSchema = z.object({
  code: z.string().min(1).max(64),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});
export type WireError = z.infer<typeof WireErrorSchema>;

/** Options of every network error: the underlying cause and structured details that travel with it. */
export interface NetworkErrorOptions {
  readonly cause?: unknown;
  /** Machine-readable context (ids, limits), sent on the wire beside the message. */
  readonly details?: Readonly<Record<string, unknown>>;
}

/** Base of every error that can cross the wire. `code` is stable; `message` is for people. */
export class NetworkError extends Error {
  override readonly name: string = 'NetworkError';
  /** One of `ErrorCode`, or a code this version does not know (kept as received). */
  readonly code: ErrorCode | (string & {}) = ErrorCode.Internal;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(message: string, options: NetworkErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.details = options.details;
  }

  /** Rebuilds the typed error from its wire form; see `errorFromWire`. */
  static fromWire(wire: unknown): NetworkError {
    return errorFromWire(wire);
  }

  /** The error as an RPC response carries it. */
  toWire(): WireError {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: { ...this.details } };
  }
}

/** A referenced agent, channel, task or adapter does not exist. */
export class NotFoundError extends NetworkError {
  override readonly name: string = 'NotFoundError';
  override readonly code = ErrorCode.NotFound;
}

/** A rule or the arbiter denied the operation. */
export class AccessDeniedError extends NetworkError {
  override readonly name: string = 'AccessDeniedError';
  override readonly code = ErrorCode.AccessDenied;
}

/** Authentication failed: unknown scheme, missing or wrong credentials. */
export class AuthError extends NetworkError {
  override readonly name: string = 'AuthError';
  override readonly code = ErrorCode.AuthFailed;
}

/** The operation breaks the channel protocol: wrong turn, wrong state, bad manifest or knobs. */
export class ProtocolError extends NetworkError {
  override readonly name: string = 'ProtocolError';
  override readonly code = ErrorCode.ProtocolError;
}

/** A recipient's inbox is at its `max_pending` capacity. AG2 calls this `InboxFull`. */
export class InboxFullError extends NetworkError {
  override readonly name: string = 'InboxFullError';
  override readonly code = ErrorCode.InboxFull;
}

/** The request itself is malformed: it failed schema validation. */
export class InvalidRequestError extends NetworkError {
  override readonly name: string = 'InvalidRequestError';
  override readonly code = ErrorCode.InvalidRequest;
}

/** The server failed in a way that is not the caller's fault. */
export class InternalError extends NetworkError {
  override readonly name: string = 'InternalError';
  override readonly code = ErrorCode.Internal;
}

/** Another write got there first; the request was not applied. */
export class ConflictError extends NetworkError {
  override readonly name: string = 'ConflictError';
  override readonly code = ErrorCode.Conflict;
}

/** The hub could not serve the request now and did nothing with it; the same request may be sent again. */
export class UnavailableError extends NetworkError {
  override readonly name: string = 'UnavailableError';
  override readonly code = ErrorCode.Unavailable;
}

/** A wire error whose code this version does not know: the code is kept as received. */
export class UnknownNetworkError extends NetworkError {
  override readonly name: string = 'UnknownNetworkError';
  override readonly code: string;
  constructor(code: string, message: string, options: NetworkErrorOptions = {}) {
    super(message, options);
    this.code = code;
  }
}

type NetworkErrorClass = new (message: string, options?: NetworkErrorOptions) => NetworkError;

const CLASSES: Readonly<Record<ErrorCode, NetworkErrorClass>> = {
  [ErrorCode.NotFound]: NotFoundError,
  [ErrorCode.AccessDenied]: AccessDeniedError,
  [ErrorCode.AuthFailed]: AuthError,
  [ErrorCode.ProtocolError]: ProtocolError,
  [ErrorCode.InboxFull]: InboxFullError,
  [ErrorCode.InvalidRequest]: InvalidRequestError,
  [ErrorCode.Internal]: InternalError,
  [ErrorCode.Conflict]: ConflictError,
  [ErrorCode.Unavailable]: UnavailableError,
};

function isKnownCode(code: string): code is ErrorCode {
  return Object.hasOwn(CLASSES, code);
}

/**
 * Rebuilds the typed error from its wire form. Input that is not a wire error becomes an `InternalError`
 * whose message says so, never a crash.
 */
export function errorFromWire(wire: unknown): NetworkError {
  const parsed = WireErrorSchema.safeParse(wire);
  if (!parsed.success) {
    return new InternalError('malformed error response', { cause: parsed.error });
  }
  const { code, message, details } = parsed.data;
  const options = details === undefined ? {} : { details };
  if (!isKnownCode(code)) return new UnknownNetworkError(code, message, options);
  const ErrorClass = CLASSES[code];
  return new ErrorClass(message, options);
}

/**
 * Normalizes any thrown value into a `NetworkError`, for handler boundaries: network errors pass through,
 * anything else becomes an `InternalError` that keeps the original as `cause`.
 */
export function toNetworkError(thrown: unknown): NetworkError {
  if (thrown instanceof NetworkError) return thrown;
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  return new InternalError(message, { cause: thrown });
}
