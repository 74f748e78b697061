/**
 * The crash policy of a service process: a crash is logged in one line, what the process holds is released within a
 * time bound, and the process exits 1. hub-service and agent-runner install it first thing in `main`.
 */

/** How long a crashing process waits for its cleanup before it exits anyway: 5 s. */
export const DEFAULT_CRASH_CLOSE_TIMEOUT_MS = 5_000;

/** The longest crash reason logged, in characters (an error message can hold a whole payload). */
const REASON_CHARS = 200;

/** What the crash policy needs of a logger. */
export interface CrashLogger {
  fatal(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Options of `installCrashPolicy`. */
export interface CrashPolicyOptions {
  readonly log: CrashLogger;
  /** Releases what must not stay held (a hub's lease, an agent's turn locks, the connection); called once. */
  readonly close: () => Promise<unknown>;
  /** How long `close` may take before the process exits anyway, in ms; default `DEFAULT_CRASH_CLOSE_TIMEOUT_MS`. */
  readonly closeTimeoutMs?: number;
  /** Ends the process; default `process.exit`. */
  readonly exit?: (code: number) => void;
  /** Where the events come from; default `process`. */
  readonly target?: NodeJS.EventEmitter;
}

/**
 * Installs the process's policy for `unhandledRejection` and `uncaughtException`: log one short line, run `close`
 * (bounded by `closeTimeoutMs`) so that a dying hub releases its lease and a dying runner its turn locks instead of
 * holding them until they expire, and exit with code 1. A second failure while closing is logged and changes nothing. Returns a function that removes
 * the handlers.
 */
export function installCrashPolicy(options: CrashPolicyOptions): () => void {
  const target = options.target ?? process;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const timeoutMs = options.closeTimeoutMs ?? DEFAULT_CRASH_CLOSE_TIMEOUT_MS;
  let crashing = false;
  const onCrash = (event: string) => (thrown: unknown) => {
    const reason = clip(thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : String(thrown), REASON_CHARS);
    if (crashing) {
      options.log.error({ event, reason }, 'another failure while closing after a crash');
      return;
    }
    crashing = true;
    options.log.fatal({ event, reason }, 'crashed; closing and exiting');
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    void Promise.race([options.close().catch(() => undefined), timedOut]).finally(() => {
      clearTimeout(timer);
      exit(1);
    });
  };
  const rejection = onCrash('unhandledRejection');
  const exception = onCrash('uncaughtException');
  target.on('unhandledRejection', rejection);
  target.on('uncaughtException', exception);
  return () => {
    target.off('unhandledRejection', rejection);
    target.off('uncaughtException', exception);
  };
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
