import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { findNatsServer } from './binary.js';

/** Options of `startNatsServer`. */
export interface NatsServerOptions {
  /** JetStream store directory; default a fresh temporary directory, removed by `stop()`. */
  readonly storeDir?: string;
  /** Client port; default a random free port (`-p -1`). */
  readonly port?: number;
  /** Server name (`-n`); default `nats-<pid>`. */
  readonly name?: string;
  /** Extra configuration text appended to the generated config file (e.g. a `cluster { … }` block). */
  readonly extraConfig?: string;
  /** How long to wait for the server to come up, in ms; default 15 000. */
  readonly startTimeoutMs?: number;
}

/** A running nats-server with JetStream, started for tests. */
export interface NatsServer {
  /** `nats://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  readonly storeDir: string;
  readonly pid: number;
  /** Graceful stop (SIGTERM) and wait for exit; removes the store dir when it was created here. */
  stop(): Promise<void>;
  /** Crash (SIGKILL) and wait for exit; keeps the store dir for `restart()`. */
  kill(): Promise<void>;
  /** Starts a new server on the same port and store dir (after `kill()` or a stop with `keepData`). */
  restart(): Promise<NatsServer>;
  /** Freezes the server (SIGSTOP): connections stay open but nothing is answered, like a stalled node. */
  pause(): void;
  /** Lets a paused server run again (SIGCONT). */
  resume(): void;
  [Symbol.asyncDispose](): Promise<void>;
}

const JS_LIMITS = 'jetstream { max_memory_store: 268435456, max_file_store: 2147483648 }';

/**
 * Starts a real nats-server with JetStream on a random port and a temporary store directory, and resolves once it
 * accepts connections. Each test file starts its own.
 */
export async function startNatsServer(options: NatsServerOptions = {}): Promise<NatsServer> {
  const bin = findNatsServer();
  const ownsStore = options.storeDir === undefined;
  const storeDir = options.storeDir ?? (await mkdtemp(join(tmpdir(), 'ag2net-nats-')));
  const portsDir = await mkdtemp(join(tmpdir(), 'ag2net-ports-'));
  const configPath = join(portsDir, 'server.conf');
  await writeFile(configPath, `${JS_LIMITS}\n${options.extraConfig ?? ''}\n`);
  const args = ['-a', '127.0.0.1', '-p', String(options.port ?? -1), '-js', '-sd', storeDir];
  args.push('--ports_file_dir', portsDir, '-c', configPath);
  if (options.name !== undefined) args.push('-n', options.name);

  const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let port: number;
  try {
    port = await waitForPort(portsDir, child, options.startTimeoutMs ?? 15_000);
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    await rm(portsDir, { recursive: true, force: true });
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(`nats-server did not start: ${reason}\n${stderr}`, { cause: err });
  }

  const running = (): boolean => child.exitCode === null && child.signalCode === null;
  const finish = async (signal: NodeJS.Signals, removeStore: boolean): Promise<void> => {
    if (running()) {
      child.kill(signal);
      // A paused server acts on SIGTERM only once it runs again.
      child.kill('SIGCONT');
    }
    await exited;
    await rm(portsDir, { recursive: true, force: true });
    if (removeStore) await rm(storeDir, { recursive: true, force: true });
  };
  let stopped = false;
  const server: NatsServer = {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    pid: child.pid ?? -1,
    async stop() {
      if (stopped) return;
      stopped = true;
      await finish('SIGTERM', ownsStore);
    },
    async kill() {
      stopped = true;
      await finish('SIGKILL', false);
    },
    async restart() {
      if (!stopped) await server.kill();
      const next = await startNatsServer({ ...options, port, storeDir });
      return ownsStore ? withStoreCleanup(next) : next;
    },
    pause() {
      if (running()) child.kill('SIGSTOP');
    },
    resume() {
      if (running()) child.kill('SIGCONT');
    },
    [Symbol.asyncDispose]() {
      return server.stop();
    },
  };
  return server;
}

/** A restarted server owns the store dir its predecessor created, so its `stop()` removes it. */
function withStoreCleanup(server: NatsServer): NatsServer {
  const stop = async (): Promise<void> => {
    await server.stop();
    await rm(server.storeDir, { recursive: true, force: true });
  };
  return { ...server, stop, [Symbol.asyncDispose]: stop };
}

async function waitForPort(portsDir: string, child: ChildProcess, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`exited with code ${child.exitCode}`);
    const files = (await readdir(portsDir)).filter((f) => f.endsWith('.ports'));
    const file = files[0];
    if (file !== undefined) {
      // The server may still be writing the file: an empty or partial file is read again on the next poll.
      const url = portsUrl(parseOrNull(await readFile(join(portsDir, file), 'utf8')));
      if (url !== null) return Number(new URL(url).port);
    }
    await sleep(20);
  }
  throw new Error(`no ports file after ${timeoutMs} ms`);
}

function portsUrl(parsed: unknown): string | null {
  if (typeof parsed !== 'object' || parsed === null || !('nats' in parsed)) return null;
  const urls = parsed.nats;
  return Array.isArray(urls) && typeof urls[0] === 'string' ? urls[0] : null;
}

function parseOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
