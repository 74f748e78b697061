import { createIdentityKeys, credsFile, personSeed } from '@ag2net/auth';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heldKey, stackPersonSeed } from './person-key.js';
import { StackFiles } from './stack.js';

const SECRET = 'a-bridge-secret-of-32-bytes-or-more-000';
let cwd: string;
let stack: StackFiles;

beforeAll(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'ag2net-person-key-'));
  stack = new StackFiles(cwd, undefined);
  await mkdir(stack.authDir, { recursive: true });
});

afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
});

describe('stackPersonSeed', () => {
  it("derives the console's key of a name from the bridge secret beside the auth directory, read as the bridge reads it", async () => {
    await writeFile(stack.auth('bridge-secret'), `  ${SECRET}\n`);
    const seed = await stackPersonSeed(stack, 'alice');
    expect(seed).toBe(personSeed(new TextEncoder().encode(SECRET), 'alice'));
    expect(await stackPersonSeed(stack, 'bob')).not.toBe(seed);
  });

  it('is null without a secret the bridge would start with: no file, or fewer than 32 bytes', async () => {
    await rm(stack.auth('bridge-secret'));
    expect(await stackPersonSeed(stack, 'alice')).toBeNull();
    await writeFile(stack.auth('bridge-secret'), `${'x'.repeat(31)}\n`);
    expect(await stackPersonSeed(stack, 'alice')).toBeNull();
  });
});

describe('heldKey', () => {
  const seed = personSeed(new TextEncoder().encode(SECRET), 'alice');
  const jwt = ['e30', Buffer.from('{}').toString('base64url'), 'c2ln'].join('.');

  it("tells no file, a file of the seed's key, and a file of another key or of none", async () => {
    const path = join(cwd, 'alice.creds');
    expect(await heldKey(path, seed)).toBe('none');
    await writeFile(path, credsFile(jwt, seed));
    expect(await heldKey(path, seed)).toBe('same');
    await writeFile(path, credsFile(jwt, createIdentityKeys().seed));
    expect(await heldKey(path, seed)).toBe('other');
    await writeFile(path, 'not a creds file');
    expect(await heldKey(path, seed)).toBe('other');
  });
});
