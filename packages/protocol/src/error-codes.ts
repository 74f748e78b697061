import { z } from 'zod';

/** The codes the hub answers in RPC error bodies (scope `wire`); the first codes of `ERROR_CODES`. */
export const WIRE_ERROR_CODES = [
  'not_found',
  'access_denied',
  'auth_failed',
  'protocol_error',
  'inbox_full',
  'invalid_request',
  'internal',
  'conflict',
  'unavailable',
] as const;
export type WireErrorCode = (typeof WIRE_ERROR_CODES)[number];

/**
 * Every code an ag2net error carries, in one closed list: the codes the hub answers in RPC error bodies, the one the
 * bridge adds over HTTP, the local ones of clients and services, and the model failures an agent reports in
 * `ag2.turn.failed`. Clients switch on these, never on messages. conformance/fixtures/error-codes.json holds the same
 * list with each code's retryability, HTTP status and exit code; the TypeScript and the Python client check
 * themselves against it.
 */
export const ERROR_CODES = [
  ...WIRE_ERROR_CODES,
  'rate_limited',
  'timeout',
  'cancelled',
  'closed',
  'invalid_config',
  'model_auth',
  'model_timeout',
  'model_unavailable',
  'model_malformed_output',
  'model_rejected',
  'model_error',
] as const;

/** One of `ERROR_CODES`. */
export const ErrorCodeSchema = z.enum(ERROR_CODES);
export type ErrorCode = z.infer<typeof ErrorCodeSchema>;

/** The codes by name, for code that reads better with a name than a string. */
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
  /** Too many requests from one caller; the bridge answers it over HTTP. */
  RateLimited: 'rate_limited',
  /** A wait ran out. Local. */
  Timeout: 'timeout',
  /** The operation was cancelled or aborted. Local. */
  Cancelled: 'cancelled',
  /** The participant, inbox or subscription it needs is closed. Local. */
  Closed: 'closed',
  /** Bad flags, environment, configuration or credential files. Local. */
  InvalidConfig: 'invalid_config',
  ModelAuth: 'model_auth',
  ModelTimeout: 'model_timeout',
  ModelUnavailable: 'model_unavailable',
  ModelMalformedOutput: 'model_malformed_output',
  ModelRejected: 'model_rejected',
  ModelError: 'model_error',
} as const satisfies Record<string, ErrorCode>;

/**
 * Where a code is used. `wire`: the hub answers it in RPC error bodies. `http`: only the bridge answers it.
 * `local`: raised inside a process, never answered by the hub. `model`: a model call's failure, reported in
 * `ag2.turn.failed`.
 */
export const ErrorScope = { Wire: 'wire', Http: 'http', Local: 'local', Model: 'model' } as const;
export type ErrorScope = (typeof ErrorScope)[keyof typeof ErrorScope];

/**
 * The exit codes of the `ag2net` command, stable for scripts: 0 ok, 1 error, 2 usage (a bad flag, argument or
 * configuration), 3 not found, 4 access denied, 5 unavailable (NATS or the hub did not answer in time).
 */
export const ExitCode = {
  Ok: 0,
  Error: 1,
  Usage: 2,
  NotFound: 3,
  AccessDenied: 4,
  Unavailable: 5,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** What one code means for a caller: whether to try again, and how HTTP and the command line report it. */
export interface ErrorCodeInfo {
  readonly scope: ErrorScope;
  /** The same call may succeed if made again later: nothing was done, or the cause is transient. */
  readonly retryable: boolean;
  /** The status the bridge answers it with. */
  readonly httpStatus: number;
  /** The exit code of the `ag2net` command that failed with it. */
  readonly exitCode: ExitCode;
}

const { Wire, Http, Local, Model } = ErrorScope;

/** The one table of what each code means; every mapping below reads it. */
export const ERROR_CODE_INFO: Readonly<Record<ErrorCode, ErrorCodeInfo>> = {
  not_found: { scope: Wire, retryable: false, httpStatus: 404, exitCode: ExitCode.NotFound },
  access_denied: { scope: Wire, retryable: false, httpStatus: 403, exitCode: ExitCode.AccessDenied },
  auth_failed: { scope: Wire, retryable: false, httpStatus: 401, exitCode: ExitCode.AccessDenied },
  protocol_error: { scope: Wire, retryable: false, httpStatus: 422, exitCode: ExitCode.Error },
  inbox_full: { scope: Wire, retryable: false, httpStatus: 429, exitCode: ExitCode.Error },
  invalid_request: { scope: Wire, retryable: false, httpStatus: 400, exitCode: ExitCode.Usage },
  internal: { scope: Wire, retryable: false, httpStatus: 500, exitCode: ExitCode.Error },
  conflict: { scope: Wire, retryable: false, httpStatus: 409, exitCode: ExitCode.Error },
  unavailable: { scope: Wire, retryable: true, httpStatus: 503, exitCode: ExitCode.Unavailable },
  rate_limited: { scope: Http, retryable: true, httpStatus: 429, exitCode: ExitCode.Error },
  timeout: { scope: Local, retryable: true, httpStatus: 504, exitCode: ExitCode.Unavailable },
  cancelled: { scope: Local, retryable: false, httpStatus: 499, exitCode: ExitCode.Error },
  closed: { scope: Local, retryable: false, httpStatus: 503, exitCode: ExitCode.Unavailable },
  invalid_config: { scope: Local, retryable: false, httpStatus: 500, exitCode: ExitCode.Usage },
  model_auth: { scope: Model, retryable: false, httpStatus: 502, exitCode: ExitCode.Error },
  model_timeout: { scope: Model, retryable: true, httpStatus: 504, exitCode: ExitCode.Error },
  model_unavailable: { scope: Model, retryable: true, httpStatus: 503, exitCode: ExitCode.Error },
  model_malformed_output: { scope: Model, retryable: false, httpStatus: 502, exitCode: ExitCode.Error },
  model_rejected: { scope: Model, retryable: false, httpStatus: 502, exitCode: ExitCode.Error },
  model_error: { scope: Model, retryable: false, httpStatus: 502, exitCode: ExitCode.Error },
};

/** How a code this version does not know (a newer hub's) is treated: like `internal`. */
export const UNKNOWN_ERROR_CODE_INFO: ErrorCodeInfo = ERROR_CODE_INFO.internal;

/** Whether `code` is one of `ERROR_CODES`. */
export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CODE_INFO, code);
}

/** What `code` means; a code this version does not know is treated like `internal`. */
export function errorCodeInfo(code: string): ErrorCodeInfo {
  return isErrorCode(code) ? ERROR_CODE_INFO[code] : UNKNOWN_ERROR_CODE_INFO;
}

/** Whether an error with `code` may succeed if tried again. The one place retryability is decided. */
export function isRetryableCode(code: string): boolean {
  return errorCodeInfo(code).retryable;
}

/** The HTTP status the bridge answers an error with `code` with (500 for a code this version does not know). */
export function httpStatusOf(code: string): number {
  return errorCodeInfo(code).httpStatus;
}

/** The exit code of a command that failed with `code` (1 for a code this version does not know). */
export function exitCodeOf(code: string): ExitCode {
  return errorCodeInfo(code).exitCode;
}

/** The codes a client may retry with the same request: the hub did nothing with it. */
export const RETRYABLE_ERROR_CODES: readonly string[] = WIRE_ERROR_CODES.filter(isRetryableCode);
