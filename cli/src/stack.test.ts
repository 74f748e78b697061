import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StackFiles, credsServerKey } from './stack.js';

let cwd: string;

beforeAll(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'ag2net-stack-'));
});

afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
});

describe('StackFiles', () => {
  it('finds the auth directory in .data/ below the working directory, or where --auth-dir says', () => {
    const here = new StackFiles(cwd, undefined);
    expect([here.authDir, here.operatorCallerCreds, here.shown(here.adminCreds)]).toEqual([
      join(cwd, '.data', 'auth'),
      join(cwd, '.data', 'auth', 'operator-caller.creds'),
      join('.data', 'auth', 'admin.creds'),
    ]);
    const elsewhere = new StackFiles(cwd, '/srv/stack/auth');
    expect([elsewhere.dataDir, elsewhere.shown(elsewhere.registrantCreds)]).toEqual([
      '/srv/stack',
      '/srv/stack/auth/registrant.creds',
    ]);
  });

  it('keeps identities’ credentials under the server npm start names: nats, nats-alt or the URL', async () => {
    const stack = new StackFiles(cwd, undefined);
    const creds = join(cwd, '.data', 'creds');
    // No .data/creds here yet: below the home directory.
    expect(await stack.identityCredsDir('nats://127.0.0.1:4222', 'ag2')).toBe(
      join(homedir(), '.ag2net', 'creds', 'nats', 'ag2'),
    );
    await mkdir(join(creds, 'nats', 'ag2'), { recursive: true });
    expect(await stack.identityCredsDir('nats://127.0.0.1:4222', 'ag2')).toBe(join(creds, 'nats', 'ag2'));
    expect(await stack.identityCredsDir('nats://localhost', 'p1')).toBe(join(creds, 'nats', 'p1'));
    // Another port of this machine: nats-alt once npm start made it, else the URL's own.
    expect(await stack.identityCredsDir('nats://127.0.0.1:40001', 'ag2')).toBe(
      join(creds, 'url_127_0_0_1_40001', 'ag2'),
    );
    await mkdir(join(creds, 'nats-alt'), { recursive: true });
    expect(await stack.identityCredsDir('nats://127.0.0.1:40001', 'ag2')).toBe(join(creds, 'nats-alt', 'ag2'));
    // A server npm start was pointed at (NATS_URL) has a directory of its URL, which wins.
    await mkdir(join(creds, credsServerKey('nats://127.0.0.1:4222')), { recursive: true });
    expect(await stack.identityCredsDir('nats://127.0.0.1:4222', 'ag2')).toBe(join(creds, 'url_127_0_0_1_4222', 'ag2'));
    expect(await stack.identityCredsDir('nats://hub.example:4222', 'ag2')).toBe(
      join(creds, 'url_hub_example_4222', 'ag2'),
    );
  });
});
