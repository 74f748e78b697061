import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  HOST_OPS,
  HostReplySchema,
  type HostOp,
  type HostParams,
  type HostReply,
  type HostResult,
} from './protocol.js';

const ENTRY = fileURLToPath(new URL('./main.ts', import.meta.url));

/** Default time one host operation may take, in ms (creating 10,000 channels is driven elsewhere; this is per call). */
export const DEFAULT_HOST_TIMEOUT_MS = 300_000;

/** Options of `HostProcess.start`. */
export interface HostProcessOptions {
  /** Names the process in errors and its CPU profile file. */
  readonly name: string;
  /** Write a V8 CPU profile of the process here when it exits; default none. */
  readonly profileDir?: string | undefined;
}

/** What a host process may be sent: an end without any cleanup, or a pause and its end (a stalled host). */
export type HostSignal = 'SIGKILL' | 'SIGSTOP' | 'SIGCONT';

/** A bench host process (see `main.ts`), spoken to over Node's IPC channel. */
export class HostProcess implements AsyncDisposable {
  readonly #child: ChildProcess;
  readonly #pending = new Map<number, (reply: HostReply) => void>();
  readonly #exited: Promise<number | null>;
  #nextId = 1;
  #paused = false;

  private constructor(
    readonly name: string,
    child: ChildProcess,
  ) {
    this.#child = child;
    this.#exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    child.on('message', (raw) => {
      const reply = HostReplySchema.safeParse(raw);
      if (!reply.success) return;
      const resolve = this.#pending.get(reply.data.id);
      this.#pending.delete(reply.data.id);
      resolve?.(reply.data);
    });
    void this.#exited.then((code) => {
      for (const resolve of this.#pending.values()) resolve({ id: -1, ok: false, error: `host exited (${code})` });
      this.#pending.clear();
    });
  }

  static async start(options: HostProcessOptions): Promise<HostProcess> {
    const execArgv = ['--conditions=@ag2net/source', '--import', 'tsx', '--expose-gc'];
    if (options.profileDir !== undefined) {
      // One directory per host: tsx's loader runs in a worker thread, which writes a profile of its own beside the
      // main thread's (the larger file).
      const dir = join(options.profileDir, `${options.name}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
      mkdirSync(dir, { recursive: true });
      execArgv.push('--cpu-prof', '--cpu-prof-dir', dir);
    }
    const child = fork(ENTRY, [], { execArgv, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const host = new HostProcess(options.name, child);
    const ready = new Promise<HostReply>((resolve) => host.#pending.set(0, resolve));
    const reply = await ready;
    if (!reply.ok) throw new Error(`host ${options.name} did not start: ${reply.error}`);
    return host;
  }

  /** Runs `op` in the host and returns its validated result. */
  async call<Op extends HostOp>(
    op: Op,
    params: HostParams<Op>,
    timeoutMs: number = DEFAULT_HOST_TIMEOUT_MS,
  ): Promise<HostResult<Op>> {
    const id = this.#nextId++;
    const reply = await new Promise<HostReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`host ${this.name}: ${op} took longer than ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, (r) => {
        clearTimeout(timer);
        resolve(r);
      });
      this.#child.send({ id, op, params });
    });
    if (!reply.ok) throw new Error(`host ${this.name}: ${op} failed: ${reply.error}`);
    return parseResult(op, reply.result);
  }

  /**
   * Sends `signal` to the process. SIGKILL ends it at once: its hub gets no chance to stop, its NATS connections
   * close with the process, and calls in progress fail. SIGSTOP pauses it (connections stay open) until SIGCONT.
   * Throws when the process has already exited.
   */
  signal(signal: HostSignal): void {
    if (!this.#child.kill(signal)) throw new Error(`host ${this.name}: ${signal} not delivered (exited?)`);
    this.#paused = signal === 'SIGSTOP';
  }

  /** Closes the IPC channel; the host stops its hub and exits (writing its CPU profile). Idempotent. */
  async close(): Promise<void> {
    // A paused process could not see the channel close.
    if (this.#paused && this.#child.exitCode === null && this.#child.signalCode === null) this.signal('SIGCONT');
    if (this.#child.connected) this.#child.disconnect();
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 30_000);
    await this.#exited;
    clearTimeout(timer);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

function parseResult<Op extends HostOp>(op: Op, value: unknown): HostResult<Op> {
  // The schema looked up by `op` is the one `HostResult<Op>` is inferred from; TypeScript cannot follow the index.
  return HOST_OPS[op].result.parse(value) as HostResult<Op>;
}
