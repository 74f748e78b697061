import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

/** A service of the local stack, run from its TypeScript sources, its pino logs in a file. */
export interface StackService {
  readonly name: string;
  readonly logFile: string;
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  /** SIGTERM, and SIGKILL if it is still running after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** Starts `entry` with node + tsx from `root`, resolving workspace packages to sources. */
export async function startStackService(options: {
  readonly root: string;
  readonly logDir: string;
  readonly name: string;
  readonly entry: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
}): Promise<StackService> {
  await mkdir(options.logDir, { recursive: true });
  const logFile = join(options.logDir, `${options.name}.log`);
  const log = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(
    process.execPath,
    ['--conditions=@ag2net/source', '--import', 'tsx', options.entry, ...options.args],
    {
      cwd: options.root,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    name: options.name,
    logFile,
    child,
    exited,
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
