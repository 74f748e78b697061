import { ErrorCode, NetworkError } from '@ag2net/protocol';
import { HubUnavailableError } from '@ag2net/client';
import { errors } from '@nats-io/transport-node';
import { ZodError } from 'zod';

/**
 * The command's exit codes, stable for scripts: 0 ok, 1 error, 2 usage (a bad flag or argument), 3 not found,
 * 4 access denied (NATS refused the credentials or a subject, or the hub refused the caller), 5 hub unavailable
 * (NATS unreachable, or no hub answered in time).
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

/** A failure the command reports itself: a message, the exit code, and the fix when there is one. */
export class CliError extends Error {
  override readonly name = 'CliError';
  readonly hint: string | null;

  constructor(
    message: string,
    readonly exitCode: ExitCode,
    options: ErrorOptions & { readonly hint?: string } = {},
  ) {
    super(message, { cause: options.cause });
    this.hint = options.hint ?? null;
  }
}

/** A bad flag or argument (exit 2). */
export function usageError(message: string, hint: string | null = null): CliError {
  return new CliError(message, ExitCode.Usage, hint === null ? {} : { hint });
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
      exitCode: ExitCode.Usage,
      message: `invalid argument: ${where}${first?.message ?? err.message}`,
      hint: null,
    };
  }
  if (err instanceof NetworkError) return diagnoseNetwork(err);
  if (err instanceof HubUnavailableError) {
    return { exitCode: ExitCode.Unavailable, message: err.message, hint: UNAVAILABLE_HINT };
  }
  const nats = natsCause(err);
  if (nats !== null) return nats;
  return { exitCode: ExitCode.Error, message: err instanceof Error ? err.message : String(err), hint: null };
}

function diagnoseNetwork(err: NetworkError): Diagnosis {
  const message = `${err.code}: ${err.message}`;
  switch (err.code) {
    case ErrorCode.NotFound:
      return { exitCode: ExitCode.NotFound, message, hint: null };
    case ErrorCode.AccessDenied:
      return { exitCode: ExitCode.AccessDenied, message, hint: DENIED_HINT };
    case ErrorCode.AuthFailed:
      return { exitCode: ExitCode.AccessDenied, message, hint: 'pass the admission key the hub expects: --api-key' };
    case ErrorCode.Unavailable:
      return { exitCode: ExitCode.Unavailable, message, hint: UNAVAILABLE_HINT };
    default:
      return { exitCode: ExitCode.Error, message, hint: null };
  }
}

/** NATS errors, also when wrapped as a `cause`: refused credentials or subjects, an unreachable server. */
function natsCause(err: unknown): Diagnosis | null {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth += 1) {
    if (e instanceof errors.AuthorizationError || e instanceof errors.UserAuthenticationExpiredError) {
      return {
        exitCode: ExitCode.AccessDenied,
        message: `NATS refused the credentials: ${e.message}`,
        hint:
          'pass valid credentials with --creds <file> (NATS_CREDS); a person whose credentials expired is attached ' +
          'again, and they are renewed, by `ag2net chat <agent> --as <name>`',
      };
    }
    if (e instanceof errors.PermissionViolationError) {
      return { exitCode: ExitCode.AccessDenied, message: `NATS refused: ${e.message}`, hint: DENIED_HINT };
    }
    if (e instanceof errors.NoRespondersError || e instanceof errors.TimeoutError) {
      return { exitCode: ExitCode.Unavailable, message: `no hub answered: ${e.message}`, hint: UNAVAILABLE_HINT };
    }
    if (e instanceof errors.ConnectionError || e instanceof errors.ClosedConnectionError || isRefused(e)) {
      return { exitCode: ExitCode.Unavailable, message: `cannot reach NATS: ${e.message}`, hint: UNAVAILABLE_HINT };
    }
  }
  return null;
}

function isRefused(e: Error): boolean {
  return 'code' in e && (e.code === 'ECONNREFUSED' || e.code === 'ENOTFOUND' || e.code === 'CONNECTION_REFUSED');
}
