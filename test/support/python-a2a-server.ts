import { within } from '@ag2net/test-support';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SERVER = `${ROOT}test/fixtures/a2a/python_server.py`;

/** A line `python_server.py` prints: ready (its endpoint) or a message it executed (the whole text it was sent). */
const LineSchema = z.discriminatedUnion('event', [
  z.object({ event: z.literal('ready'), url: z.string() }),
  z.object({ event: z.literal('heard'), text: z.string() }),
]);

/**
 * `test/fixtures/a2a/python_server.py` running as a child process: an A2A agent on `a2a-sdk`'s server that answers
 * `<name> heard: <the last line it was sent>`.
 */
export interface PythonA2aServer {
  /** Its JSON-RPC endpoint, `http://127.0.0.1:<port>/a2a`. */
  readonly url: string;
  /** The text of every message it executed, in order. */
  heard(): readonly string[];
  /** Kills the process (SIGKILL) and resolves once it is gone; idempotent. */
  kill(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Options of `startPythonA2aServer`. */
export interface PythonA2aServerOptions {
  /** The interpreter with `a2a-sdk[http-server]` and uvicorn installed. */
  readonly python: string;
  /** The agent's name, the first word of its answers; default `py-oracle`. */
  readonly name?: string;
  /** How long to wait for the ready line, in ms; default 30 000. */
  readonly readyTimeoutMs?: number;
}

/** Starts the Python A2A server on a free port and resolves once it accepts connections. */
export async function startPythonA2aServer(options: PythonA2aServerOptions): Promise<PythonA2aServer> {
  const child = spawn(options.python, [SERVER, '0', options.name ?? 'py-oracle'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const heard: string[] = [];
  let err = '';
  let buffered = '';
  let announceReady: (url: string) => void = () => undefined;
  const ready = new Promise<string>((resolve) => (announceReady = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const parsed = LineSchema.safeParse(parseJson(buffered.slice(0, nl)));
      buffered = buffered.slice(nl + 1);
      if (!parsed.success) continue;
      if (parsed.data.event === 'ready') announceReady(parsed.data.url);
      else heard.push(parsed.data.text);
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  const failed = exited.then(() => Promise.reject(new Error(`python_server.py exited before it was ready:\n${err}`)));
  try {
    const url = await within(Promise.race([ready, failed]), options.readyTimeoutMs ?? 30_000, 'python_server.py');
    return { url, heard: () => heard, kill, [Symbol.asyncDispose]: kill };
  } catch (e) {
    await kill();
    throw e;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
