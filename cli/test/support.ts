/**
 * Runs the `ag2net` command in-process against a real stack, with its standard streams captured: `run` for a
 * command that ends, `start` for one that follows (abort it with `stop()`).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { runCli, type CliIo } from '../src/index.js';

/** An empty working directory: no `.data/` of a stack on this machine is found unless a test lays one out. */
const EMPTY_CWD = mkdtempSync(join(tmpdir(), 'ag2net-cli-cwd-'));

/** A finished command line: exit code and what it wrote. */
export interface Ran {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** How the fake terminal looks to the command. */
export interface IoOptions {
  /** Lines on standard input (`chat`). */
  readonly stdin?: readonly string[];
  /** Environment; default none (no NATS_URL from the machine running the tests). */
  readonly env?: Record<string, string>;
  /** Whether standard output is a terminal (progress lines on standard error); default false. */
  readonly tty?: boolean;
  /** The working directory (where `.data/` is looked for); default an empty one. */
  readonly cwd?: string;
}

/** A command line running in the background. */
export interface Running {
  /** What it wrote so far. */
  out(): string;
  err(): string;
  /** Ctrl-C, then its result. */
  stop(): Promise<Ran>;
  /** Its result, when it ends by itself. */
  readonly done: Promise<Ran>;
}

export function start(argv: readonly string[], options: IoOptions = {}): Running {
  let out = '';
  let err = '';
  const controller = new AbortController();
  const io: CliIo = {
    out: (text) => void (out += text),
    err: (text) => void (err += text),
    lines: () => Readable.from(options.stdin ?? []),
    env: { NO_COLOR: '1', ...options.env },
    isTty: options.tty ?? false,
    signal: controller.signal,
    cwd: options.cwd ?? EMPTY_CWD,
  };
  const done = runCli(argv, io).then((code) => ({ code, out, err }));
  return {
    out: () => out,
    err: () => err,
    stop: () => {
      controller.abort();
      return done;
    },
    done,
  };
}

export function run(argv: readonly string[], options: IoOptions = {}): Promise<Ran> {
  return start(argv, options).done;
}

/** JSON lines of a `--follow --json` output. */
export function jsonLines(text: string): unknown[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as unknown);
}
