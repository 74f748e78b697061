import { createInterface } from 'node:readline';

/**
 * Where the command reads and writes, and what it knows of its terminal: the process's own streams in `main.ts`,
 * buffers in tests. Everything the command prints goes through here.
 */
export interface CliIo {
  /** Writes to standard output (results: tables, JSON). */
  out(text: string): void;
  /** Writes to standard error (errors, progress, hints). */
  err(text: string): void;
  /** Lines typed on standard input (`chat`); ends at end of input. */
  lines(): AsyncIterable<string>;
  /** Environment variables (`NATS_URL`, `NATS_CREDS`, `AG2NET_PREFIX`, `NO_COLOR`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** True when standard output is a terminal: colours and progress only then. */
  readonly isTty: boolean;
  /** Aborts on Ctrl-C: `--follow` and `chat` end cleanly (exit 0). */
  readonly signal: AbortSignal;
  /** The working directory relative paths start from, `.data/` among them; default the process's. */
  readonly cwd?: string;
}

/** The process's own streams; Ctrl-C (SIGINT) and SIGTERM abort `signal`. */
export function processIo(): CliIo {
  const controller = new AbortController();
  const stop = (): void => controller.abort(new Error('interrupted'));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return {
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    lines: () => createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false }),
    env: process.env,
    isTty: process.stdout.isTTY === true,
    signal: controller.signal,
    cwd: process.cwd(),
  };
}
