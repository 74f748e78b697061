import { decode, type Account, type Operator, type User } from '@nats-io/jwt';
import { createAccount, createUser } from '@nats-io/nkeys';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from './cli.js';
import { AuthFile } from './files.js';
import { authInit, readManifest } from './init.js';
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

const ensureDir = (path: string): Promise<string | undefined> => mkdir(path, { recursive: true, mode: 0o700 });

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

  it('signs both accounts with the operator signing key and enables JetStream for the data account only', async () => {
    const auth = await authInit({ dir, prefix: 'acme' });
    const m = auth.manifest;
    const op = decode<Operator>((await readFile(auth.path(AuthFile.operatorJwt), 'utf8')).trim());
    expect(op.sub).toBe(m.operator.public_key);
    expect(op.nats.signing_keys).toEqual([m.operator.signing_key]);
    expect(op.nats.system_account).toBe(m.system_account.public_key);
    const data = decode<Account>((await readFile(auth.path(AuthFile.dataAccountJwt), 'utf8')).trim());
    expect(data.iss).toBe(m.operator.signing_key);
    expect(data.nats.limits?.disk_storage).toBe(-1);
    expect(data.nats.default_permissions).toEqual({ pub: { allow: [], deny: ['>'] }, sub: { allow: [], deny: ['>'] } });
    expect(data.nats.signing_keys?.[0]).toBe(m.data_account.signing_key);
    expect(data.nats.signing_keys?.[1]).toMatchObject({
      kind: 'user_scope',
      key: m.data_account.hub_service_signing_key,
      role: 'hub-service',
    });
    const identity = decode<Account>((await readFile(auth.path(AuthFile.identityAccountJwt), 'utf8')).trim());
    expect(identity.iss).toBe(m.operator.signing_key);
    // No JetStream of its own: nothing an identity's reply subject names can reach a stream there.
    expect(identity.nats.limits?.disk_storage).toBeUndefined();
    expect(identity.nats.limits?.mem_storage).toBeUndefined();
    expect(identity.nats.signing_keys).toEqual([m.identity_account.signing_key]);
    expect(identity.nats.default_permissions).toEqual(data.nats.default_permissions);
    const sys = decode<Account>((await readFile(auth.path(AuthFile.systemAccountJwt), 'utf8')).trim());
    expect(sys.nats.limits?.disk_storage).toBeUndefined();
    const conf = await readFile(auth.path(AuthFile.authConf), 'utf8');
    expect(conf).toContain(`system_account: ${m.system_account.public_key}`);
    expect(conf).toContain(`${m.data_account.public_key}: `);
    expect(conf).toContain(`${m.identity_account.public_key}: `);
    expect(conf).toContain('resolver: MEMORY');
    expect(conf).not.toContain('no_auth_user');
    expect(await readFile(auth.path(AuthFile.serverConf), 'utf8')).toContain(
      `jetstream { store_dir: ${JSON.stringify(join(root, 'jetstream'))} }`,
    );
  });

  it('exports exactly the hub operations, the roster and the inbox consumers to the identity account', async () => {
    const auth = await authInit({ dir, prefix: 'acme' });
    const m = auth.manifest;
    const data = decode<Account>((await readFile(auth.path(AuthFile.dataAccountJwt), 'utf8')).trim());
    const identity = decode<Account>((await readFile(auth.path(AuthFile.identityAccountJwt), 'utf8')).trim());
    const exported = (data.nats.exports ?? []).map((e) => [e.type, e.subject, e.response_type]);
    expect(exported).toEqual([
      ['service', 'acme.hub.v1.>', 'Singleton'],
      ['service', 'acme.hubs.v1.ping', 'Stream'],
      ['service', '$JS.API.CONSUMER.MSG.NEXT.ACME_INBOX.*', 'Stream'],
      ['service', '$JS.API.CONSUMER.INFO.ACME_INBOX.*', 'Singleton'],
      ['service', '$JS.ACK.ACME_INBOX.>', 'Singleton'],
      ['service', '$JS.API.INFO', 'Singleton'],
    ]);
    expect(data.nats.imports).toBeUndefined();
    const imported = (identity.nats.imports ?? []).map((i) => [i.type, i.subject, i.account, i.share === true]);
    expect(imported).toEqual([
      ['service', 'acme.hub.v1.>', m.data_account.public_key, true],
      ['service', 'acme.hubs.v1.ping', m.data_account.public_key, true],
      ['service', '$JS.API.CONSUMER.MSG.NEXT.ACME_INBOX.*', m.data_account.public_key, false],
      ['service', '$JS.API.CONSUMER.INFO.ACME_INBOX.*', m.data_account.public_key, false],
      ['service', '$JS.ACK.ACME_INBOX.>', m.data_account.public_key, false],
      ['service', '$JS.API.INFO', m.data_account.public_key, false],
    ]);
    expect(identity.nats.exports).toBeUndefined();
  });

  it('signs the hub-service and admin into the data account, everyone else into the identity account', async () => {
    const auth = await authInit({ dir, prefix: 'acme' });
    const m = auth.manifest;
    const issuer = async (file: AuthFile): Promise<string | undefined> =>
      decode<User>(parseCredsFile(await readFile(auth.path(file), 'utf8')).jwt).nats.issuer_account;
    expect(await issuer(AuthFile.hubServiceCreds)).toBe(m.data_account.public_key);
    expect(await issuer(AuthFile.adminCreds)).toBe(m.data_account.public_key);
    expect(await issuer(AuthFile.registrantCreds)).toBe(m.identity_account.public_key);
    expect(await issuer(AuthFile.operatorCallerCreds)).toBe(m.identity_account.public_key);
    const caller = decode<User>(parseCredsFile(await readFile(auth.path(AuthFile.operatorCallerCreds), 'utf8')).jwt);
    expect(caller.name).toBe('$operator');
  });

  it('keeps existing keys when run again, and replaces them with force', async () => {
    const first = await authInit({ dir });
    const seed = await readFile(first.path(AuthFile.identityAccountSigningSeed), 'utf8');
    const hubServiceSeed = parseCredsFile(await readFile(first.path(AuthFile.hubServiceCreds), 'utf8')).seed;
    const again = await authInit({ dir });
    expect(again.manifest).toEqual(first.manifest);
    expect(await readFile(again.path(AuthFile.identityAccountSigningSeed), 'utf8')).toBe(seed);
    expect(parseCredsFile(await readFile(again.path(AuthFile.hubServiceCreds), 'utf8')).seed).toBe(hubServiceSeed);
    const forced = await authInit({ dir, force: true });
    expect(forced.manifest.operator.public_key).not.toBe(first.manifest.operator.public_key);
    expect(forced.manifest.data_account.public_key).not.toBe(first.manifest.data_account.public_key);
  });

  it('keeps revocations across a rerun and writes each into its own account', async () => {
    const auth = await authInit({ dir });
    await revokeUser({ dir, userPublicKey: auth.manifest.users.admin, atSeconds: 1_700_000_000 });
    await revokeUser({ dir, userPublicKey: auth.manifest.users.registrant, atSeconds: 1_700_000_001 });
    const again = await authInit({ dir });
    expect(again.manifest.revocations).toEqual({
      data: { [auth.manifest.users.admin]: 1_700_000_000 },
      identity: { [auth.manifest.users.registrant]: 1_700_000_001 },
    });
    const data = decode<Account>((await readFile(again.path(AuthFile.dataAccountJwt), 'utf8')).trim());
    expect(data.nats.revocations).toEqual({ [auth.manifest.users.admin]: 1_700_000_000 });
    const identity = decode<Account>((await readFile(again.path(AuthFile.identityAccountJwt), 'utf8')).trim());
    expect(identity.nats.revocations).toEqual({ [auth.manifest.users.registrant]: 1_700_000_001 });
  });

  it('upgrades a directory of the one-account layout in place: same data account, a new signing key', async () => {
    // The first layout: one hub account whose signing key signed identities, the registrant and the admin.
    await ensureDir(dir);
    const hubAccount = createAccount();
    const oldSigning = createAccount();
    const seedOf = (k: { getSeed(): Uint8Array }): string => new TextDecoder().decode(k.getSeed());
    await writeFile(join(dir, 'hub-account.nk'), `${seedOf(hubAccount)}\n`, { mode: 0o600 });
    await writeFile(join(dir, 'hub-account-signing.nk'), `${seedOf(oldSigning)}\n`, { mode: 0o600 });
    const revokedIdentity = createUser().getPublicKey();
    await writeFile(
      join(dir, AuthFile.manifest),
      JSON.stringify({
        version: 1,
        prefix: 'acme',
        hub_account: { name: 'ag2net-acme', public_key: hubAccount.getPublicKey() },
        revocations: { [revokedIdentity]: 1_700_000_000 },
      }),
    );
    const auth = await authInit({ dir, prefix: 'acme' });
    expect(auth.manifest.version).toBe(2);
    expect(auth.manifest.data_account.public_key).toBe(hubAccount.getPublicKey());
    expect(auth.manifest.data_account.signing_key).not.toBe(oldSigning.getPublicKey());
    expect(auth.manifest.identity_account.signing_key).not.toBe(oldSigning.getPublicKey());
    expect((await readdir(dir)).includes('hub-account-signing.nk')).toBe(false);
    expect(auth.manifest.revocations.identity).toEqual({ [revokedIdentity]: 1_700_000_000 });
    const data = decode<Account>((await readFile(auth.path(AuthFile.dataAccountJwt), 'utf8')).trim());
    expect(JSON.stringify(data.nats.signing_keys)).not.toContain(oldSigning.getPublicKey());
  });

  it('refuses to read a manifest of the earlier layout, naming the upgrade', async () => {
    await ensureDir(dir);
    const path = join(dir, AuthFile.manifest);
    await writeFile(
      path,
      JSON.stringify({
        version: 1,
        prefix: 'acme',
        hub_account: { public_key: createAccount().getPublicKey() },
        revocations: {},
      }),
    );
    await expect(readManifest(path)).rejects.toThrow(/earlier layout .* rerun auth init/);
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
