import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PARTY = `${ROOT}clients/python/scripts/interop_party.py`;

/**
 * The Python interpreter with the `ag2net` package installed: `AG2NET_PYTHON`, else the venv `.ci/run` makes
 * (`.venv-ci`), else `null` (the cross-language tests are then skipped, unless `AG2NET_REQUIRE_PYTHON=1`, as in CI,
 * makes them fail instead).
 */
export function pythonWithAg2net(): string | null {
  const configured = process.env['AG2NET_PYTHON'];
  if (configured !== undefined && configured !== '') return configured;
  const venv = `${ROOT}.venv-ci/bin/python`;
  return existsSync(venv) ? venv : null;
}

/** Whether a missing Python must fail the cross-language tests rather than skip them. */
export const PYTHON_REQUIRED = process.env['AG2NET_REQUIRE_PYTHON'] === '1';

/** One line the Python party printed. */
const PartyLineSchema = z.object({ event: z.string() }).catchall(z.unknown());
export type PartyLine = z.infer<typeof PartyLineSchema>;

/** A running `interop_party.py` process. */
export interface PythonParty {
  readonly child: ChildProcess;
  /** Every JSON line printed so far. */
  readonly lines: PartyLine[];
  /** Everything written to stderr (for failure messages). */
  stderr(): string;
  /** Resolves with the first line (already printed or to come) that matches; rejects when the process exits first. */
  line(predicate: (line: PartyLine) => boolean): Promise<PartyLine>;
  readonly exited: Promise<number | null>;
  /** Kills the process (SIGKILL) and waits for it to be gone. */
  kill(): Promise<void>;
}

/** Starts `interop_party.py` with `args` after `--nats URL --prefix P`. */
export function startPythonParty(options: {
  readonly python: string;
  readonly natsUrl: string;
  readonly prefix: string;
  readonly args: readonly string[];
}): PythonParty {
  const child = spawn(options.python, [PARTY, '--nats', options.natsUrl, '--prefix', options.prefix, ...options.args], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: PartyLine[] = [];
  const waiters: { predicate: (l: PartyLine) => boolean; resolve: (l: PartyLine) => void }[] = [];
  let err = '';
  let buffered = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const text = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      const parsed = PartyLineSchema.safeParse(safeJson(text));
      if (!parsed.success) continue;
      lines.push(parsed.data);
      for (const w of waiters.filter((w) => w.predicate(parsed.data))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(parsed.data);
      }
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    lines,
    stderr: () => err,
    exited,
    line(predicate) {
      const seen = lines.find(predicate);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ predicate, resolve });
        void exited.then((code) => reject(new Error(`python party exited (${code}) first:\n${err}`)));
      });
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
