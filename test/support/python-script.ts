import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** One line a script printed: a JSON object naming its `event`. */
const ScriptLineSchema = z.looseObject({ event: z.string() });
export type ScriptLine = z.infer<typeof ScriptLineSchema>;

/** How long `line()` waits by default, in milliseconds. */
export const DEFAULT_LINE_TIMEOUT_MS = 30_000;

/** A running Python script that prints one JSON object a line and reads the lines the test writes to its stdin. */
export interface PythonScript {
  /** Every line printed so far, in order. */
  readonly lines: readonly ScriptLine[];
  /**
   * Resolves with the first line (already printed or to come) `predicate` holds for; rejects when the script exits
   * first or after `timeoutMs` (default `DEFAULT_LINE_TIMEOUT_MS`).
   */
  line(predicate: (line: ScriptLine) => boolean, timeoutMs?: number): Promise<ScriptLine>;
  /** Writes `text` and a newline to the script's stdin. */
  write(text: string): void;
  /** Resolves with the exit code once the script exited, rejects after `timeoutMs`. */
  exit(timeoutMs?: number): Promise<number | null>;
  /** Everything written to stderr so far (for failure messages). */
  stderr(): string;
  /** Kills the script (SIGKILL) if it still runs, and waits for it to be gone. */
  kill(): Promise<void>;
}

/** Starts `python script ...args` from the repository's root. Lines that are not JSON objects fail the next wait. */
export function startPythonScript(options: {
  readonly python: string;
  readonly script: string;
  readonly args: readonly string[];
}): PythonScript {
  const child = spawn(options.python, [options.script, ...options.args], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: ScriptLine[] = [];
  const malformed: string[] = [];
  let err = '';
  let buffered = '';
  const changed = new EventTarget();
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const text = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      const parsed = ScriptLineSchema.safeParse(parseJson(text));
      if (parsed.success) lines.push(parsed.data);
      else malformed.push(text);
    }
    changed.dispatchEvent(new Event('line'));
  });
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  // `close`, not `exit`: the process is gone and its stdout read to the end, so `lines` holds everything it printed.
  const exited = new Promise<number | null>((resolve) => {
    child.once('close', (code) => resolve(code));
    child.once('error', (e) => {
      err += `${String(e)}\n`;
      resolve(null);
    });
  });
  const failure = (what: string) =>
    new Error(`${what}\nlines: ${JSON.stringify(lines)}\nnot JSON: ${JSON.stringify(malformed)}\nstderr:\n${err}`);

  /** Resolves with `found()` once it is defined; rejects on exit first or after `timeoutMs`. */
  const until = <T>(found: () => T | undefined, what: string, timeoutMs: number): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const check = (): void => {
        if (malformed.length > 0) return finish(() => reject(failure(`the script printed a line that is not JSON`)));
        const value = found();
        if (value !== undefined) finish(() => resolve(value));
      };
      const timer = setTimeout(() => finish(() => reject(failure(`no ${what} within ${timeoutMs} ms`))), timeoutMs);
      const finish = (settle: () => void): void => {
        clearTimeout(timer);
        changed.removeEventListener('line', check);
        settle();
      };
      changed.addEventListener('line', check);
      void exited.then(() => {
        check();
        finish(() => reject(failure(`the script exited (${String(child.exitCode)}) before ${what}`)));
      });
      check();
    });

  return {
    lines,
    line: (predicate, timeoutMs = DEFAULT_LINE_TIMEOUT_MS) =>
      until(() => lines.find(predicate), 'matching line', timeoutMs),
    write(text) {
      child.stdin.write(`${text}\n`);
    },
    async exit(timeoutMs = DEFAULT_LINE_TIMEOUT_MS) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(failure(`the script did not exit within ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        return await Promise.race([exited, late]);
      } finally {
        clearTimeout(timer);
      }
    },
    stderr: () => err,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
