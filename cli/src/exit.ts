import { Ag2netError, ErrorCode, ExitCode, HubError, exitCodeOf, type Ag2netErrorOptions } from '@ag2net/protocol';
import { errors } from '@nats-io/transport-node';
import { ZodError } from 'zod';

/**
 * The command's exit codes, stable for scripts: 0 ok, 1 error, 2 usage (a bad flag, argument or configuration),
 * 3 not found, 4 access denied (NATS refused the credentials or a subject, or the hub refused the caller), 5
 * unavailable (NATS unreachable, or no hub answered in time). Each error code has one (`exitCodeOf`, the table in
 * `@ag2net/protocol` that conformance/fixtures/error-codes.json pins).
 */
export { ExitCode };

/** A failure the command reports itself: a message, its code (which gives the exit code), and the fix when there is one. */
export class CliError extends Ag2netError {
  override readonly name = 'CliError';
  readonly hint: string | null;

  constructor(message: string, code: ErrorCode, options: Ag2netErrorOptions & { readonly hint?: string } = {}) {
    super(code, message, options);
    this.hint = options.hint ?? null;
  }

  /** The exit code of `code` (`exitCodeOf`). */
  get exitCode(): ExitCode {
    return exitCodeOf(this.code);
  }
}

/** A bad flag or argument: `invalid_request` (exit 2). */
export function usageError(message: string, hint: string | null = null): CliError {
  return new CliError(message, ErrorCode.InvalidRequest, hint === null ? {} : { hint });
}

/** What the user can do about a failure: exit code and a hint that names the fix. */
export interface Diagnosis {
  readonly exitCode: ExitCode;
  readonly message: string;
  readonly hint: string | null;
}

const UNAVAILABLE_HINT =
  'check that nats-server and hub-service run (`npm start`), and pass --server or NATS_URL, and --prefix or AG2NET_PREFIX';
const DENIED_HINT =
  'pass credentials that carry the right: --creds <file> (NATS_CREDS) of the identity, or --operator with admin.creds';

/** Maps any failure to its exit code and a message that names the fix. */
export function diagnose(err: unknown): Diagnosis {
  if (err instanceof CliError) return { exitCode: err.exitCode, message: err.message, hint: err.hint };
  if (err instanceof ZodError) {
    const first = err.issues[0];
    const where = first === undefined || first.path.length === 0 ? '' : `${first.path.join('.')}: `;
    return {
      exitCode: exitCodeOf(ErrorCode.InvalidRequest),
      message: `invalid argument: ${where}${first?.message ?? err.message}`,
      hint: null,
    };
  }
  if (err instanceof HubError)
    return { exitCode: exitCodeOf(err.code), message: `${err.code}: ${err.message}`, hint: hubHint(err.code) };
  // A local error of the client or a library (no hub answered, a credentials file that is none): its code's exit.
  if (err instanceof Ag2netError) {
    return {
      exitCode: exitCodeOf(err.code),
      message: err.message,
      hint: err.code === ErrorCode.Unavailable ? UNAVAILABLE_HINT : null,
    };
  }
  const nats = natsCause(err);
  if (nats !== null) return nats;
  return { exitCode: ExitCode.Error, message: err instanceof Error ? err.message : String(err), hint: null };
}

/** The fix for a refusal of the hub, by its code. */
function hubHint(code: string): string | null {
  switch (code) {
    case ErrorCode.AccessDenied:
      return DENIED_HINT;
    case ErrorCode.AuthFailed:
      return 'pass the admission key the hub expects: --api-key';
    case ErrorCode.Unavailable:
      return UNAVAILABLE_HINT;
    default:
      return null;
  }
}

/** NATS errors, also when wrapped as a `cause`: refused credentials or subjects, an unreachable server. */
function natsCause(err: unknown): Diagnosis | null {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth += 1) {
    if (e instanceof errors.AuthorizationError || e instanceof errors.UserAuthenticationExpiredError) {
      return {
        exitCode: exitCodeOf(ErrorCode.AccessDenied),
        message: `NATS refused the credentials: ${e.message}`,
        hint:
          'pass valid credentials with --creds <file> (NATS_CREDS); a person whose credentials expired is attached ' +
          'again, and they are renewed, by `ag2net chat <agent> --as <name>`',
      };
    }
    if (e instanceof errors.PermissionViolationError) {
      return { exitCode: exitCodeOf(ErrorCode.AccessDenied), message: `NATS refused: ${e.message}`, hint: DENIED_HINT };
    }
    if (e instanceof errors.NoRespondersError || e instanceof errors.TimeoutError) {
      return {
        exitCode: exitCodeOf(ErrorCode.Unavailable),
        message: `no hub answered: ${e.message}`,
        hint: UNAVAILABLE_HINT,
      };
    }
    if (e instanceof errors.ConnectionError || e instanceof errors.ClosedConnectionError || isRefused(e)) {
      return {
        exitCode: exitCodeOf(ErrorCode.Unavailable),
        message: `cannot reach NATS: ${e.message}`,
        hint: UNAVAILABLE_HINT,
      };
    }
  }
  return null;
}

function isRefused(e: Error): boolean {
  return 'code' in e && (e.code === 'ECONNREFUSED' || e.code === 'ENOTFOUND' || e.code === 'CONNECTION_REFUSED');
}
