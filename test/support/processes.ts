import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A service started as its own OS process from the TypeScript sources. */
export interface ServiceProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far (its pino JSON logs). */
  output(): string;
  /** Sends `signal` and resolves with the exit code once the process is gone (a paused process is resumed). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Freezes the process (SIGSTOP): it holds its connections but runs nothing until `resume()`. */
  pause(): void;
  /** Lets a paused process run again (SIGCONT). */
  resume(): void;
  readonly exited: Promise<number | null>;
}

/** Starts `entry` (a path from the repository root) with node + tsx, resolving workspace packages to sources. */
export function startService(
  name: string,
  entry: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): ServiceProcess {
  const child = spawn(process.execPath, ['--conditions=@ag2net/source', '--import', 'tsx', entry, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  // `AG2_SERVICE_LOG_DIR` keeps each service's output in `<dir>/<name>-<pid>.log` too, to read after a failed run.
  const logDir = process.env['AG2_SERVICE_LOG_DIR'];
  const keep = (chunk: Buffer): void => {
    out += chunk.toString();
    if (logDir !== undefined && logDir !== '') appendFileSync(join(logDir, `${name}-${child.pid ?? 0}.log`), chunk);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const running = (): boolean => child.exitCode === null && child.signalCode === null;
  return {
    name,
    child,
    output: () => out,
    exited,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (running()) {
        child.kill(signal);
        // A paused process acts on SIGTERM only once it runs again.
        child.kill('SIGCONT');
      }
      return exited;
    },
    pause() {
      if (running()) child.kill('SIGSTOP');
    },
    resume() {
      if (running()) child.kill('SIGCONT');
    },
  };
}

/** A service's log line (pino JSON), as far as tests read it: its time, message and partition. */
const LogLineSchema = z.looseObject({ time: z.number(), msg: z.string(), partition: z.number().optional() });

/** One log line of a service: `partition` is `-1` on a line that names none. */
export interface LogLine {
  readonly time: number;
  readonly msg: string;
  readonly partition: number;
}

/** Every JSON log line the service wrote so far (other lines, and a line still being written, are skipped). */
export function logLines(service: ServiceProcess): LogLine[] {
  return jsonLogLines(service, LogLineSchema).map(({ time, msg, partition }) => ({
    time,
    msg,
    partition: partition ?? -1,
  }));
}

/** Every log line of the service that is JSON of `schema`'s shape, parsed by it; other lines are skipped. */
export function jsonLogLines<T>(service: ServiceProcess, schema: z.ZodType<T>): T[] {
  return service
    .output()
    .split('\n')
    .flatMap((line) => {
      if (!line.startsWith('{')) return [];
      try {
        const parsed = schema.safeParse(JSON.parse(line));
        return parsed.success ? [parsed.data] : [];
      } catch {
        return [];
      }
    });
}

/** Starts a hub-service process against `natsUrl`. */
export function startHubService(options: {
  readonly extraArgs?: readonly string[];
  readonly natsUrl: string;
  readonly prefix: string;
  readonly hubId: string;
  readonly leaseTtlMs?: number;
}): ServiceProcess {
  return startService(`hub-${options.hubId}`, 'hub-service/src/main.ts', [
    '--nats-url',
    options.natsUrl,
    '--prefix',
    options.prefix,
    '--hub-id',
    options.hubId,
    '--lease-ttl-ms',
    String(options.leaseTtlMs ?? 1500),
    '--log-level',
    'info',
    ...(options.extraArgs ?? []),
  ]);
}

/** Starts an agent-runner process hosting the agents of `configPath` (a path from the repository root). */
export function startRunner(options: {
  readonly natsUrl: string;
  readonly prefix: string;
  readonly configPath: string;
  readonly name: string;
  /** The runner's `--turn-lock-ttl-ms`; default 3000; `null` leaves the runner's own default. */
  readonly turnLockTtlMs?: number | null;
  /** More flags (`--creds`, `--creds-dir`, `--api-key`, …). */
  readonly extraArgs?: readonly string[];
}): ServiceProcess {
  const lockTtl = options.turnLockTtlMs === null ? [] : ['--turn-lock-ttl-ms', String(options.turnLockTtlMs ?? 3000)];
  return startService(options.name, 'agent-runner/src/main.ts', [
    options.configPath,
    '--nats-url',
    options.natsUrl,
    '--prefix',
    options.prefix,
    ...lockTtl,
    ...(options.extraArgs ?? []),
  ]);
}
