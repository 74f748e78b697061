import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_URL_FILE, recordConsoleUrl } from '../scripts/stack/bridge.js';
import type { StackService } from '../scripts/stack/services.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ag2net-console-url-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("npm start's console URL", () => {
  it('is in the auth directory while the bridge runs, for `ag2net people add`, and gone once it stopped', async () => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const bridge: StackService = {
      name: 'bridge',
      logFile: join(dir, 'bridge.log'),
      child,
      exited,
      async stop() {
        child.kill('SIGTERM');
        await exited;
      },
    };
    const file = join(dir, CONSOLE_URL_FILE);
    const service = await recordConsoleUrl(bridge, { file, url: 'http://127.0.0.1:40123/' });
    expect(await readFile(file, 'utf8')).toBe('http://127.0.0.1:40123/\n');
    await service.stop();
    expect([child.exitCode ?? child.signalCode, await readFile(file, 'utf8').catch(() => null)]).toEqual([
      'SIGTERM',
      null,
    ]);
  });
});
