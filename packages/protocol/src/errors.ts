import { z } from 'zod';
import { ErrorCode, UNKNOWN_ERROR_CODE_INFO, isRetryableCode, type WireErrorCode } from './error-codes.js';

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

/** Options of every ag2net error: the underlying cause and structured details that travel with it. */
export interface Ag2netErrorOptions {
  readonly cause?: unknown;
  /** Machine-readable context (ids, limits), sent on the wire beside the message. */
  readonly details?: Readonly<Record<string, unknown>>;
}

/**
 * Base of every ag2net error, local or from the wire. `code` is one of `ERROR_CODES` and stable; `retryable` follows
 * from it (`isRetryableCode`); `message` is for people. Only an `UnknownHubError` carries a code this version does not
 * know, kept as a newer hub sent it.
 */
export class Ag2netError extends Error {
  override readonly name: string = 'Ag2netError';
  readonly code: ErrorCode | (string & {});
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: ErrorCode, message: string, options: Ag2netErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details;
  }

  /** Whether the same call may succeed if made again later; decided by `code` alone. */
  get retryable(): boolean {
    return isRetryableCode(this.code);
  }

  /** The error as an RPC response or the bridge carries it: code, message and details, never the cause. */
  toWire(): WireError {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: { ...this.details } };
  }
}

/**
 * Base of the errors the hub answers in RPC error bodies (codes of `WIRE_ERROR_CODES`), rebuilt by `errorFromWire` on
 * the client. Constructed directly it is `internal`.
 */
export class HubError extends Ag2netError {
  override readonly name: string = 'HubError';

  constructor(message: string, options: Ag2netErrorOptions = {}) {
    super(ErrorCode.Internal, message, options);
  }

  /** Rebuilds the typed error from its wire form; see `errorFromWire`. */
  static fromWire(wire: unknown): HubError {
    return errorFromWire(wire);
  }
}

/**
 * The former name of `HubError`: `instanceof NetworkError` holds for every `HubError`. A class of its own so that an
 * error still made with the old name keeps that name (an `ag2.turn.failed` cause carries it as `exc_type`).
 *
 * @deprecated Use `HubError` (one release of grace), or `Ag2netError` to catch every ag2net error.
 */
export class NetworkError extends HubError {
  override readonly name: string = 'NetworkError';

  static override [Symbol.hasInstance](value: unknown): boolean {
    return value instanceof HubError;
  }
}
/** @deprecated Use `Ag2netErrorOptions`. */
export type NetworkErrorOptions = Ag2netErrorOptions;

/** A referenced agent, channel, task or adapter does not exist. */
export class NotFoundError extends HubError {
  override readonly name: string = 'NotFoundError';
  override readonly code = ErrorCode.NotFound;
}

/** A rule or the arbiter denied the operation. */
export class AccessDeniedError extends HubError {
  override readonly name: string = 'AccessDeniedError';
  override readonly code = ErrorCode.AccessDenied;
}

/** Authentication failed: unknown scheme, missing or wrong credentials. */
export class AuthError extends HubError {
  override readonly name: string = 'AuthError';
  override readonly code = ErrorCode.AuthFailed;
}

/** The operation breaks the channel protocol: wrong turn, wrong state, bad manifest or knobs. */
export class ProtocolError extends HubError {
  override readonly name: string = 'ProtocolError';
  override readonly code = ErrorCode.ProtocolError;
}

/** A recipient's inbox is at its `max_pending` capacity. AG2 calls this `InboxFull`. */
export class InboxFullError extends HubError {
  override readonly name: string = 'InboxFullError';
  override readonly code = ErrorCode.InboxFull;
}

/** The request itself is malformed: it failed schema validation. */
export class InvalidRequestError extends HubError {
  override readonly name: string = 'InvalidRequestError';
  override readonly code = ErrorCode.InvalidRequest;
}

/** The server failed in a way that is not the caller's fault. */
export class InternalError extends HubError {
  override readonly name: string = 'InternalError';
  override readonly code = ErrorCode.Internal;
}

/** Another write got there first; the request was not applied. */
export class ConflictError extends HubError {
  override readonly name: string = 'ConflictError';
  override readonly code = ErrorCode.Conflict;
}

/** The hub could not serve the request now and did nothing with it; the same request may be sent again. */
export class UnavailableError extends HubError {
  override readonly name: string = 'UnavailableError';
  override readonly code = ErrorCode.Unavailable;
}

/** A wire error whose code this version does not know: the code is kept as received, and treated like `internal`. */
export class UnknownHubError extends HubError {
  override readonly name: string = 'UnknownHubError';
  override readonly code: string;
  constructor(code: string, message: string, options: Ag2netErrorOptions = {}) {
    super(message, options);
    this.code = code;
  }

  /** Never: a code this version does not know is treated like `internal`, even one it knows off the wire. */
  override get retryable(): boolean {
    return UNKNOWN_ERROR_CODE_INFO.retryable;
  }
}

/**
 * The former name of `UnknownHubError`.
 *
 * @deprecated Use `UnknownHubError`.
 */
export const UnknownNetworkError = UnknownHubError;
/** @deprecated Use `UnknownHubError`. */
export type UnknownNetworkError = UnknownHubError;

type HubErrorClass = new (message: string, options?: Ag2netErrorOptions) => HubError;

const CLASSES: Readonly<Record<WireErrorCode, HubErrorClass>> = {
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

function isWireCode(code: string): code is WireErrorCode {
  return Object.hasOwn(CLASSES, code);
}

/**
 * Rebuilds the typed error from its wire form. Input that is not a wire error becomes an `InternalError`
 * whose message says so, never a crash.
 */
export function errorFromWire(wire: unknown): HubError {
  const parsed = WireErrorSchema.safeParse(wire);
  if (!parsed.success) {
    return new InternalError('malformed error response', { cause: parsed.error });
  }
  const { code, message, details } = parsed.data;
  const options = details === undefined ? {} : { details };
  if (!isWireCode(code)) return new UnknownHubError(code, message, options);
  const ErrorClass = CLASSES[code];
  return new ErrorClass(message, options);
}

/**
 * Normalizes any thrown value into a `HubError`, for the hub's handler boundaries: hub errors pass through, anything
 * else (a local error of another code included) becomes an `InternalError` that keeps the original as `cause`.
 */
export function toHubError(thrown: unknown): HubError {
  if (thrown instanceof HubError) return thrown;
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  return new InternalError(message, { cause: thrown });
}

/** @deprecated Use `toHubError`. */
export const toNetworkError = toHubError;
