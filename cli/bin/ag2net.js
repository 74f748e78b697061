#!/usr/bin/env node
// The `ag2net` command. A built package runs dist/main.js; a workspace checkout without a build (`npm ci` only) runs
// the TypeScript sources through tsx, with the `@ag2net/source` condition so that the workspace packages resolve to
// their sources too. The child gets this process's arguments, stdio and exit code.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const built = fileURLToPath(new URL('../dist/main.js', import.meta.url));
if (existsSync(built)) {
  await import(pathToFileURL(built).href);
} else {
  const source = fileURLToPath(new URL('../src/main.ts', import.meta.url));
  const tsx = import.meta.resolve('tsx');
  const child = spawn(
    process.execPath,
    ['--conditions=@ag2net/source', '--import', tsx, source, ...process.argv.slice(2)],
    { stdio: 'inherit' },
  );
  // Ctrl-C reaches the child through the terminal's process group: the parent only waits for it. A SIGTERM sent to
  // the parent alone is passed on.
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  child.on('exit', (code) => process.exit(code ?? 1));
}
