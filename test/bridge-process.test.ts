import { AuthFile } from '@ag2net/auth';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { call } from './support/bridge-http.js';
import { startService } from './support/processes.js';
import { startSecuredStack, type SecuredStack } from './support/secured-stack.js';

let stack: SecuredStack;
let dir: string;

beforeAll(async () => {
  stack = await startSecuredStack({ apiKeys: { erin: 'k-erin' } });
  dir = await mkdtemp(join(tmpdir(), 'ag2net-bridge-proc-'));
  await writeFile(join(dir, 'keys.json'), JSON.stringify({ erin: 'k-erin' }), { mode: 0o600 });
  await writeFile(join(dir, 'secret'), randomBytes(32).toString('hex'), { mode: 0o600 });
  await writeFile(join(dir, 'operator'), 'operator-key-0123456789', { mode: 0o600 });
}, 30_000);

afterAll(async () => {
  await stack?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function listeningUrl(output: () => string, exited: Promise<number | null>): Promise<string> {
  for (;;) {
    const m = /"url":"(http:\/\/[^"]+)"/.exec(output());
    if (m?.[1] !== undefined) return m[1];
    const done = await Promise.race([exited, new Promise((r) => setTimeout(() => r('wait'), 100))]);
    if (done !== 'wait') throw new Error(`bridge exited: ${output()}`);
  }
}

describe('ag2net-bridge process', () => {
  it('serves a person signed in with their key on a secured stack and stops on SIGTERM with code 0', async () => {
    const bridge = startService('bridge', 'bridge/src/main.ts', [
      '--server',
      stack.url,
      '--prefix',
      stack.prefix,
      '--port',
      '0',
      '--auth-dir',
      stack.authDir,
      '--api-keys',
      join(dir, 'keys.json'),
      '--secret',
      join(dir, 'secret'),
      '--operator-key',
      join(dir, 'operator'),
    ]);
    try {
      const url = await listeningUrl(() => bridge.output(), bridge.exited);
      const session = await call(url, '/v1/session', { body: { name: 'erin', api_key: 'k-erin' } });
      const { token } = z.object({ token: z.string() }).parse(session.body);
      const me = await call(url, '/v1/me', { token });
      expect(z.object({ name: z.string() }).parse(me.body).name).toBe('erin');
      const op = await call(url, '/v1/session', { body: { name: '$operator', api_key: 'operator-key-0123456789' } });
      expect(op.status).toBe(200);
    } finally {
      expect(await bridge.stop()).toBe(0);
    }
  });

  it('exits 2 on an auth directory without a secret', async () => {
    const bridge = startService('bridge-bad', 'bridge/src/main.ts', [
      '--auth-dir',
      join(stack.authDir, AuthFile.adminCreds),
    ]);
    expect(await bridge.exited).toBe(2);
    expect(bridge.output()).toContain('--auth-dir needs --secret');
  });
});
