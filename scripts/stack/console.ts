import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { open, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';

/** The web console's sources and its Vite config, from the repository root. */
export const CONSOLE_SOURCE_DIR = 'bridge/console';
/** Where its build goes (what the bridge serves at `/`): the Vite config's `outDir`. */
export const CONSOLE_DIST_DIR = 'bridge/console-dist';

/** The root package.json's scripts: `build:console` is the console's build when it is declared. */
const RootPackageSchema = z.looseObject({ scripts: z.record(z.string(), z.string()).default({}) });

/** How the console was made ready. */
export type ConsoleBuild = 'built' | 'up to date';

/**
 * Builds the web console into `bridge/console-dist/` (`npm run build:console`; `vite build` with the console's config
 * where the root package declares no such script), unless the build is newer than every file of its sources. The
 * bridge indexes the build once at startup, so this runs before it starts. Throws with the build's output when the
 * build fails. Two runs at once of one checkout (two test files, two terminals) build one after the other: a build
 * empties the output directory first, and a bridge starting meanwhile would find no console.
 */
export async function buildConsole(options: {
  readonly root: string;
  readonly say: (line: string) => void;
}): Promise<ConsoleBuild> {
  const { root } = options;
  if (await isUpToDate(root)) return 'up to date';
  const release = await buildLock(root);
  try {
    // Another run may have built it while this one waited.
    if (await isUpToDate(root)) return 'up to date';
    await build(root, options.say);
    return 'built';
  } finally {
    await release();
  }
}

async function isUpToDate(root: string): Promise<boolean> {
  const built = await mtimeOf(join(root, CONSOLE_DIST_DIR, 'index.html'));
  return built !== null && built >= (await newestMtime(join(root, CONSOLE_SOURCE_DIR)));
}

/** A build taking longer than this left its lock behind (the run was killed): the lock is taken over. */
const STALE_LOCK_MS = 180_000;

/** Takes the checkout's console build lock (a file in the temporary directory); resolves with its release. */
async function buildLock(root: string): Promise<() => Promise<void>> {
  const path = join(tmpdir(), `ag2net-console-build-${createHash('sha256').update(root).digest('hex').slice(0, 16)}`);
  for (;;) {
    try {
      await (await open(path, 'wx')).close();
      return () => rm(path, { force: true });
    } catch (err) {
      if (!(err instanceof Error && 'code' in err && err.code === 'EEXIST')) throw err;
    }
    const since = await mtimeOf(path);
    if (since !== null && Date.now() - since > STALE_LOCK_MS) await rm(path, { force: true });
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function build(root: string, say: (line: string) => void): Promise<void> {
  say('· building the web console');
  const pkg = RootPackageSchema.parse(JSON.parse(await readFile(join(root, 'package.json'), 'utf8')));
  const command =
    pkg.scripts['build:console'] === undefined
      ? [join(root, 'node_modules', '.bin', 'vite'), 'build', '--config', join(CONSOLE_SOURCE_DIR, 'vite.config.ts')]
      : ['npm', 'run', '--silent', 'build:console'];
  const { code, output } = await run(command, root);
  if (code !== 0) {
    const tail = output.trimEnd().split('\n').slice(-20).join('\n');
    throw new Error(`building the web console failed (${command.join(' ')} exited with ${String(code)}):\n${tail}`);
  }
}

function run(command: readonly string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const [file = 'true', ...args] = command;
    const child = spawn(file, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

async function mtimeOf(path: string): Promise<number | null> {
  return stat(path).then(
    (s) => s.mtimeMs,
    () => null,
  );
}

/** The newest modification time of any file under `dir` (0 when it holds none). */
async function newestMtime(dir: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    newest = Math.max(newest, (await mtimeOf(join(entry.parentPath, entry.name))) ?? 0);
  }
  return newest;
}
