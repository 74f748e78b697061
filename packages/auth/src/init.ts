import { DEFAULT_PREFIX, hubNames, PrefixSchema } from '@ag2net/protocol';
import { encodeAccount, encodeOperator, type Account, type SigningKey } from '@nats-io/jwt';
import { createAccount, createOperator, createUser, fromPublic, fromSeed, type KeyPair } from '@nats-io/nkeys';
import { join, resolve } from 'node:path';
import { AuthFile, ensurePrivateDir, readIfExists, writePrivate } from './files.js';
import { credsFile, issueUserJwt, jwtPermissions } from './issue.js';
import { pairOf, type NkeyPair } from './keys.js';
import { AuthManifestSchema, type AuthManifest } from './manifest.js';
import {
  hubServicePermissions,
  operatorPermissions,
  registrantPermissions,
  type UserPermissions,
} from './permissions.js';
import { renderAuthConf, renderServerConf } from './server-config.js';

/** Options of `authInit`. */
export interface AuthInitOptions {
  /** The directory that receives the keys, credentials and config (created 0700). */
  readonly dir: string;
  /** The hub's prefix; default `ag2`. The hub account's permissions are derived from its names. */
  readonly prefix?: string;
  /** Replace every existing key with a new one; default false (existing keys are kept). */
  readonly force?: boolean;
  /** The operator's name in its JWT; default `ag2net`. */
  readonly operatorName?: string;
  /** `server.conf` listen host; default `127.0.0.1`. */
  readonly host?: string;
  /** `server.conf` listen port; default 4222. */
  readonly port?: number;
  /** `server.conf` JetStream store directory; default `<dir>/../jetstream`. */
  readonly storeDir?: string;
}

/** What `authInit` laid out. */
export interface AuthLayout {
  /** The absolute auth directory. */
  readonly dir: string;
  readonly manifest: AuthManifest;
  /** Absolute path of a file of the directory. */
  path(file: AuthFile): string;
}

/**
 * Creates (or completes) an auth directory: the operator and its signing key, the system account, the hub's account
 * (JetStream enabled, deny-by-default permissions for users issued without any) and its signing key, the
 * hub-service, admin, registrant and system users with their `.creds`, and the nats-server config (`server.conf`
 * including `auth.conf`: operator mode, memory resolver with preload, system account). Every file is 0600, the
 * directory 0700. Rerunnable: existing keys are kept and the JWTs, creds and config are re-signed from them (so a
 * changed prefix or a revocation takes effect); `force` replaces every key.
 */
export async function authInit(options: AuthInitOptions): Promise<AuthLayout> {
  const dir = resolve(options.dir);
  const path = (file: AuthFile): string => join(dir, file);
  await ensurePrivateDir(dir);
  const prefix = PrefixSchema.parse(options.prefix ?? DEFAULT_PREFIX);
  const names = hubNames(prefix);
  const force = options.force ?? false;
  const key = (file: AuthFile, create: () => KeyPair): Promise<NkeyPair> => loadOrCreate(path(file), create, force);

  const operator = await key(AuthFile.operatorSeed, createOperator);
  const operatorSigning = await key(AuthFile.operatorSigningSeed, createOperator);
  const systemAccount = await key(AuthFile.systemAccountSeed, createAccount);
  const hubAccount = await key(AuthFile.hubAccountSeed, createAccount);
  const hubSigning = await key(AuthFile.hubAccountSigningSeed, createAccount);
  const hubServiceSigning = await key(AuthFile.hubServiceSigningSeed, createAccount);
  const users = {
    hub_service: await key(AuthFile.hubServiceSeed, createUser),
    admin: await key(AuthFile.adminSeed, createUser),
    registrant: await key(AuthFile.registrantSeed, createUser),
    system: await key(AuthFile.systemUserSeed, createUser),
  };
  const previous = force ? null : await readManifest(path(AuthFile.manifest));
  const manifest: AuthManifest = {
    version: 1,
    prefix,
    operator: {
      name: options.operatorName ?? 'ag2net',
      public_key: operator.publicKey,
      signing_key: operatorSigning.publicKey,
    },
    system_account: { name: 'SYS', public_key: systemAccount.publicKey },
    hub_account: {
      name: `ag2net-${prefix}`,
      public_key: hubAccount.publicKey,
      signing_key: hubSigning.publicKey,
      hub_service_signing_key: hubServiceSigning.publicKey,
    },
    users: {
      hub_service: users.hub_service.publicKey,
      admin: users.admin.publicKey,
      registrant: users.registrant.publicKey,
      system: users.system.publicKey,
    },
    // Revocations name users of the hub account; they outlive a rerun but not a new account key.
    revocations: previous?.hub_account.public_key === hubAccount.publicKey ? previous.revocations : {},
  };

  const operatorJwt = await encodeOperator(manifest.operator.name, fromSeed(seedBytes(operator)), {
    signing_keys: [operatorSigning.publicKey],
    system_account: systemAccount.publicKey,
  });
  const opSigner = { signer: fromSeed(seedBytes(operatorSigning)) };
  const systemAccountJwt = await encodeAccount(
    manifest.system_account.name,
    fromPublic(systemAccount.publicKey),
    { limits: { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 } },
    opSigner,
  );
  const hubAccountJwt = await encodeHubAccount(manifest, opSigner.signer);

  const issue = async (
    user: NkeyPair,
    name: string,
    permissions: UserPermissions | null,
    account: NkeyPair,
    signing: NkeyPair,
  ): Promise<string> =>
    credsFile(
      await issueUserJwt({
        accountPublicKey: account.publicKey,
        accountSigningSeed: signing.seed,
        userPublicKey: user.publicKey,
        name,
        permissions,
      }),
      user.seed,
    );
  await writePrivate(
    path(AuthFile.hubServiceCreds),
    // The hub's permission list is long (about 6.5 KB as a JWT, past nats-server's 4 KB CONNECT line): it lives in the
    // account JWT as the template of a scoped signing key, and the hub-service user JWT carries none.
    await issue(users.hub_service, 'hub-service', null, hubAccount, hubServiceSigning),
  );
  await writePrivate(
    path(AuthFile.adminCreds),
    await issue(users.admin, 'admin', operatorPermissions(names), hubAccount, hubSigning),
  );
  await writePrivate(
    path(AuthFile.registrantCreds),
    await issue(users.registrant, 'registrant', registrantPermissions(names), hubAccount, hubSigning),
  );
  // The system user is signed by the system account itself (it has no signing key): it may do anything there,
  // which is what pushing account JWT updates (revocations) to a running server needs.
  await writePrivate(
    path(AuthFile.systemUserCreds),
    await issue(users.system, 'system', ALL, systemAccount, systemAccount),
  );

  await writePrivate(path(AuthFile.operatorJwt), `${operatorJwt}\n`);
  await writePrivate(path(AuthFile.systemAccountJwt), `${systemAccountJwt}\n`);
  await writePrivate(path(AuthFile.hubAccountJwt), `${hubAccountJwt}\n`);
  await renderDirConfig(dir, manifest, hubAccountJwt);
  await writePrivate(
    path(AuthFile.serverConf),
    renderServerConf({
      host: options.host ?? '127.0.0.1',
      port: options.port ?? 4222,
      storeDir: resolve(options.storeDir ?? join(dir, '..', 'jetstream')),
    }),
  );
  await writePrivate(path(AuthFile.manifest), `${JSON.stringify(manifest, null, 2)}\n`);
  return { dir, manifest, path };
}

const ALL: UserPermissions = { pub: { allow: ['>'], deny: [] }, sub: { allow: ['>'], deny: [] } };

/**
 * The hub account's JWT: JetStream enabled without limits, its signing key, its revocations, and default
 * permissions that deny everything, so a user issued without permissions can do nothing.
 */
export async function encodeHubAccount(manifest: AuthManifest, operatorSigner: KeyPair): Promise<string> {
  const hubService: SigningKey = {
    kind: 'user_scope',
    key: manifest.hub_account.hub_service_signing_key,
    role: 'hub-service',
    template: { ...jwtPermissions(hubServicePermissions(hubNames(manifest.prefix))), subs: -1, data: -1, payload: -1 },
  };
  const account: Partial<Account> = {
    signing_keys: [manifest.hub_account.signing_key, hubService],
    limits: {
      subs: -1,
      data: -1,
      payload: -1,
      imports: -1,
      exports: -1,
      wildcards: true,
      conn: -1,
      leaf: -1,
      mem_storage: -1,
      disk_storage: -1,
      streams: -1,
      consumer: -1,
    },
    default_permissions: { pub: { allow: [], deny: ['>'] }, sub: { allow: [], deny: ['>'] } },
    revocations: { ...manifest.revocations },
  };
  return encodeAccount(manifest.hub_account.name, fromPublic(manifest.hub_account.public_key), account, {
    signer: operatorSigner,
  });
}

/**
 * Writes `auth.conf` of an auth directory from its operator and system account JWT files and the hub account JWT
 * (which changes with every revocation).
 */
export async function renderDirConfig(dir: string, manifest: AuthManifest, hubAccountJwt: string): Promise<void> {
  const read = async (file: AuthFile): Promise<string> => {
    const text = await readIfExists(join(dir, file));
    if (text === null) throw new Error(`${dir} lacks ${file}: run auth init`);
    return text.trim();
  };
  await writePrivate(
    join(dir, AuthFile.authConf),
    renderAuthConf({
      operatorJwt: await read(AuthFile.operatorJwt),
      systemAccountPublicKey: manifest.system_account.public_key,
      accounts: {
        [manifest.system_account.public_key]: await read(AuthFile.systemAccountJwt),
        [manifest.hub_account.public_key]: hubAccountJwt,
      },
    }),
  );
}

/** The manifest of an auth directory, or `null` when there is none. Throws on a malformed one. */
export async function readManifest(path: string): Promise<AuthManifest | null> {
  const text = await readIfExists(path);
  if (text === null) return null;
  return AuthManifestSchema.parse(JSON.parse(text));
}

async function loadOrCreate(path: string, create: () => KeyPair, force: boolean): Promise<NkeyPair> {
  const existing = force ? null : await readIfExists(path);
  if (existing !== null) return pairOf(fromSeed(new TextEncoder().encode(existing.trim())));
  const pair = pairOf(create());
  await writePrivate(path, `${pair.seed}\n`);
  return pair;
}

function seedBytes(pair: NkeyPair): Uint8Array {
  return new TextEncoder().encode(pair.seed);
}
