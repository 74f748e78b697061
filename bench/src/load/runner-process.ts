import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const RUNNER_ENTRY = 'agent-runner/src/main.ts';
/**
 * Whether a variable of the driver's environment would change what a runner does (every `AG2NET_` setting, its log
 * level, a model provider's key): such variables are left out of its environment.
 */
const isRunnerSetting = (name: string): boolean =>
  name.startsWith('AG2NET_') || ['LOG_LEVEL', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY'].includes(name);
/** How often `waitForOutput` looks, ms. */
const POLL_MS = 10;

/** Where `RunnerProcess.start` starts a runner. */
export interface RunnerStart {
  /** Names the process in errors. */
  readonly name: string;
  readonly natsUrl: string;
  readonly prefix: string;
  /** The runner's config file. */
  readonly configPath: string;
}

/**
 * An agent runner (`agent-runner/src/main.ts`) in a process of its own, at its defaults: the turn-lock TTL, the log
 * level and the model are the runner's own, whatever the driver's environment says. With `NATS_CREDS` set (a secured
 * server) it connects with those credentials, as the bench's other connections do.
 */
export class RunnerProcess {
  readonly name: string;
  readonly #child: ChildProcess;
  readonly #exited: Promise<void>;
  #output = '';

  private constructor(name: string, child: ChildProcess) {
    this.name = name;
    this.#child = child;
    this.#exited = new Promise((resolve) => child.once('exit', () => resolve()));
    const keep = (chunk: Buffer): void => {
      this.#output += chunk.toString();
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
  }

  static start(options: RunnerStart): RunnerProcess {
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !isRunnerSetting(name)));
    const creds = process.env['NATS_CREDS'];
    const args = [
      '--conditions=@ag2net/source',
      '--import',
      'tsx',
      RUNNER_ENTRY,
      options.configPath,
      '--nats-url',
      options.natsUrl,
      '--prefix',
      options.prefix,
      ...(creds === undefined || creds === '' ? [] : ['--creds', creds]),
    ];
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    return new RunnerProcess(options.name, child);
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** How many times `text` occurs in what the process wrote so far (stdout and stderr). */
  count(text: string): number {
    return this.#output.split(text).length - 1;
  }

  /** Resolves once `text` occurs at least `times` times in the output; throws after `timeoutMs` or when it exits. */
  async waitForOutput(text: string, times: number, timeoutMs: number): Promise<void> {
    const until = performance.now() + timeoutMs;
    while (this.count(text) < times) {
      if (this.#child.exitCode !== null || this.#child.signalCode !== null) {
        throw new Error(`runner ${this.name} exited before writing ${JSON.stringify(text)}: ${this.#tail()}`);
      }
      if (performance.now() > until) {
        throw new Error(
          `runner ${this.name} did not write ${JSON.stringify(text)} within ${timeoutMs} ms: ${this.#tail()}`,
        );
      }
      await sleep(POLL_MS);
    }
  }

  /** Ends the process with `signal` and resolves once it is gone. */
  async stop(signal: 'SIGKILL' | 'SIGTERM' = 'SIGTERM'): Promise<void> {
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill(signal);
    await this.#exited;
  }

  #tail(): string {
    return this.#output.slice(-2_000);
  }
}
