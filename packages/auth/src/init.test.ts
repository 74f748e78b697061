import { decode, type Account, type Operator } from '@nats-io/jwt';
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from './cli.js';
import { AuthFile } from './files.js';
import { authInit } from './init.js';
import { parseCredsFile } from './issue.js';
import { revokeUser } from './revoke.js';

let root: string;
let dir: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'ag2net-auth-init-'));
  dir = join(root, 'auth');
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const mode = async (path: string): Promise<number> => (await stat(path)).mode & 0o777;

// Each run signs a dozen keys and JWTs with pure-JS ed25519: about 0.2 s alone, seconds on a loaded machine.
describe('authInit', { timeout: 30_000 }, () => {
  it('lays out every file owner-only in an owner-only directory', async () => {
    await authInit({ dir, prefix: 'acme' });
    expect(await mode(dir)).toBe(0o700);
    const files = (await readdir(dir)).sort();
    expect(files).toEqual(Object.values(AuthFile).sort());
    for (const file of files) expect(await mode(join(dir, file))).toBe(0o600);
  });

  it('signs the accounts with the operator signing key and enables JetStream for the hub account only', async () => {
    const auth = await authInit({ dir, prefix: 'acme' });
    const m = auth.manifest;
    const op = decode<Operator>((await readFile(auth.path(AuthFile.operatorJwt), 'utf8')).trim());
    expect(op.sub).toBe(m.operator.public_key);
    expect(op.nats.signing_keys).toEqual([m.operator.signing_key]);
    expect(op.nats.system_account).toBe(m.system_account.public_key);
    const hub = decode<Account>((await readFile(auth.path(AuthFile.hubAccountJwt), 'utf8')).trim());
    expect(hub.iss).toBe(m.operator.signing_key);
    expect(hub.nats.limits?.disk_storage).toBe(-1);
    expect(hub.nats.default_permissions).toEqual({ pub: { allow: [], deny: ['>'] }, sub: { allow: [], deny: ['>'] } });
    expect(hub.nats.signing_keys?.[0]).toBe(m.hub_account.signing_key);
    expect(hub.nats.signing_keys?.[1]).toMatchObject({
      kind: 'user_scope',
      key: m.hub_account.hub_service_signing_key,
      role: 'hub-service',
    });
    const sys = decode<Account>((await readFile(auth.path(AuthFile.systemAccountJwt), 'utf8')).trim());
    expect(sys.nats.limits?.disk_storage).toBeUndefined();
    const conf = await readFile(auth.path(AuthFile.authConf), 'utf8');
    expect(conf).toContain(`system_account: ${m.system_account.public_key}`);
    expect(conf).toContain('resolver: MEMORY');
    expect(conf).not.toContain('no_auth_user');
    expect(await readFile(auth.path(AuthFile.serverConf), 'utf8')).toContain(
      `jetstream { store_dir: ${JSON.stringify(join(root, 'jetstream'))} }`,
    );
  });

  it('keeps existing keys when run again, and replaces them with force', async () => {
    const first = await authInit({ dir });
    const seed = await readFile(first.path(AuthFile.hubAccountSigningSeed), 'utf8');
    const hubServiceSeed = parseCredsFile(await readFile(first.path(AuthFile.hubServiceCreds), 'utf8')).seed;
    const again = await authInit({ dir });
    expect(again.manifest).toEqual(first.manifest);
    expect(await readFile(again.path(AuthFile.hubAccountSigningSeed), 'utf8')).toBe(seed);
    expect(parseCredsFile(await readFile(again.path(AuthFile.hubServiceCreds), 'utf8')).seed).toBe(hubServiceSeed);
    const forced = await authInit({ dir, force: true });
    expect(forced.manifest.operator.public_key).not.toBe(first.manifest.operator.public_key);
    expect(forced.manifest.hub_account.public_key).not.toBe(first.manifest.hub_account.public_key);
  });

  it('keeps revocations across a rerun and writes them into the hub account', async () => {
    const auth = await authInit({ dir });
    await revokeUser({ dir, userPublicKey: auth.manifest.users.admin, atSeconds: 1_700_000_000 });
    const again = await authInit({ dir });
    expect(again.manifest.revocations).toEqual({ [auth.manifest.users.admin]: 1_700_000_000 });
    const hub = decode<Account>((await readFile(again.path(AuthFile.hubAccountJwt), 'utf8')).trim());
    expect(hub.nats.revocations).toEqual({ [auth.manifest.users.admin]: 1_700_000_000 });
  });
});

describe('the command', { timeout: 30_000 }, () => {
  it('init lays out the directory and says where the files are', async () => {
    const lines: string[] = [];
    expect(await runCli(['init', '--dir', dir, '--prefix', 'acme', '--port', '14222'], (l) => lines.push(l))).toBe(0);
    expect(lines[0]).toBe(`auth for prefix acme in ${dir}`);
    expect(await readFile(join(dir, AuthFile.serverConf), 'utf8')).toContain('listen: "127.0.0.1:14222"');
  });

  it('refuses a missing directory, an unknown command and a bad port', async () => {
    const out = (): void => undefined;
    expect(await runCli(['init'], out)).toBe(2);
    expect(await runCli(['nope', '--dir', dir], out)).toBe(2);
    expect(await runCli(['init', '--dir', dir, '--port', 'x'], out)).toBe(2);
  });
});
