import { spawn } from 'node:child_process';
import { readFile, readdir, stat } from 'node:fs/promises';
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
 * build fails.
 */
export async function buildConsole(options: {
  readonly root: string;
  readonly say: (line: string) => void;
}): Promise<ConsoleBuild> {
  const { root } = options;
  const built = await mtimeOf(join(root, CONSOLE_DIST_DIR, 'index.html'));
  if (built !== null && built >= (await newestMtime(join(root, CONSOLE_SOURCE_DIR)))) return 'up to date';
  options.say('· building the web console');
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
  return 'built';
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
