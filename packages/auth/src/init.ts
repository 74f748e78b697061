import { DEFAULT_PREFIX, hubNames, OPERATOR_CALLER, PrefixSchema } from '@ag2net/protocol';
import { encodeAccount, encodeOperator, type Account, type SigningKey } from '@nats-io/jwt';
import { createAccount, createOperator, createUser, fromPublic, fromSeed, type KeyPair } from '@nats-io/nkeys';
import { join, resolve } from 'node:path';
import { dataAccountExports, identityAccountImports } from './accounts.js';
import { AuthFile, RETIRED_AUTH_FILES, ensurePrivateDir, readIfExists, removeIfExists, writePrivate } from './files.js';
import { credsFile, issueUserJwt, jwtPermissions } from './issue.js';
import { pairOf, type NkeyPair } from './keys.js';
import { AuthManifestSchema, LegacyAuthManifestSchema, type AuthManifest } from './manifest.js';
import {
  hubServicePermissions,
  operatorCallerPermissions,
  operatorPermissions,
  registrantPermissions,
  type UserPermissions,
} from './permissions.js';
import { renderAuthConf, renderServerConf } from './server-config.js';

/** Options of `authInit`. */
export interface AuthInitOptions {
  /** The directory that receives the keys, credentials and config (created 0700). */
  readonly dir: string;
  /** The hub's prefix; default `ag2`. The accounts' exports, imports and permissions are derived from its names. */
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
 * Creates (or completes) an auth directory: the operator and its signing key, the system account, the **data
 * account** (JetStream enabled; the hub-service and admin users) and the **identity account** (no JetStream; the
 * registrant, the operator caller and, issued by the hub, every identity), the exports and imports between them,
 * their signing keys, the service users with their `.creds`, and the nats-server config (`server.conf` including
 * `auth.conf`: operator mode, memory resolver with preload, system account). Every file is 0600, the directory
 * 0700. Rerunnable: existing keys are kept and the JWTs, creds and config are re-signed from them (so a changed
 * prefix or a revocation takes effect); `force` replaces every key.
 *
 * A directory of the first layout (one hub account for data and identities alike) is upgraded in place: the hub
 * account becomes the data account with the same key, so its streams and buckets stay where they are; its signing
 * key, which signed the identities, the registrant and the admin, is deleted and replaced, so that no JWT of the old
 * layout connects anywhere; its revocations carry over to both accounts. Identities keep their names, ids and keys
 * and get credentials of the identity account from the hub at their next `attach`.
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
  const dataAccount = await key(AuthFile.dataAccountSeed, createAccount);
  const dataSigning = await key(AuthFile.dataAccountSigningSeed, createAccount);
  const hubServiceSigning = await key(AuthFile.hubServiceSigningSeed, createAccount);
  const identityAccount = await key(AuthFile.identityAccountSeed, createAccount);
  const identitySigning = await key(AuthFile.identityAccountSigningSeed, createAccount);
  const users = {
    hub_service: await key(AuthFile.hubServiceSeed, createUser),
    admin: await key(AuthFile.adminSeed, createUser),
    registrant: await key(AuthFile.registrantSeed, createUser),
    operator_caller: await key(AuthFile.operatorCallerSeed, createUser),
    system: await key(AuthFile.systemUserSeed, createUser),
  };
  const revocations = force
    ? { data: {}, identity: {} }
    : await previousRevocations(path(AuthFile.manifest), {
        data: dataAccount.publicKey,
        identity: identityAccount.publicKey,
      });
  for (const retired of RETIRED_AUTH_FILES) await removeIfExists(join(dir, retired));
  const manifest: AuthManifest = {
    version: 2,
    prefix,
    operator: {
      name: options.operatorName ?? 'ag2net',
      public_key: operator.publicKey,
      signing_key: operatorSigning.publicKey,
    },
    system_account: { name: 'SYS', public_key: systemAccount.publicKey },
    data_account: {
      name: `ag2net-${prefix}`,
      public_key: dataAccount.publicKey,
      signing_key: dataSigning.publicKey,
      hub_service_signing_key: hubServiceSigning.publicKey,
    },
    identity_account: {
      name: `ag2net-${prefix}-identities`,
      public_key: identityAccount.publicKey,
      signing_key: identitySigning.publicKey,
    },
    users: {
      hub_service: users.hub_service.publicKey,
      admin: users.admin.publicKey,
      registrant: users.registrant.publicKey,
      operator_caller: users.operator_caller.publicKey,
      system: users.system.publicKey,
    },
    revocations,
  };

  const operatorJwt = await encodeOperator(manifest.operator.name, fromSeed(seedBytes(operator)), {
    signing_keys: [operatorSigning.publicKey],
    system_account: systemAccount.publicKey,
  });
  const opSigner = { signer: fromSeed(seedBytes(operatorSigning)) };
  const systemAccountJwt = await encodeAccount(
    manifest.system_account.name,
    fromPublic(systemAccount.publicKey),
    { limits: { ...CORE_LIMITS } },
    opSigner,
  );
  const accountJwts = await encodeAccounts(manifest, opSigner.signer);

  const issue = async (
    user: NkeyPair,
    name: string,
    how: { readonly permissions: UserPermissions | null; readonly account: NkeyPair; readonly signing: NkeyPair },
  ): Promise<string> => {
    const { permissions, account, signing } = how;
    const jwt = await issueUserJwt({
      accountPublicKey: account.publicKey,
      accountSigningSeed: signing.seed,
      userPublicKey: user.publicKey,
      name,
      permissions,
    });
    return credsFile(jwt, user.seed);
  };
  await writePrivate(
    path(AuthFile.hubServiceCreds),
    // The hub's permission list is long (about 6.5 KB as a JWT, past nats-server's 4 KB CONNECT line): it lives in the
    // account JWT as the template of a scoped signing key, and the hub-service user JWT carries none.
    await issue(users.hub_service, 'hub-service', {
      permissions: null,
      account: dataAccount,
      signing: hubServiceSigning,
    }),
  );
  await writePrivate(
    path(AuthFile.adminCreds),
    await issue(users.admin, 'admin', {
      permissions: operatorPermissions(names),
      account: dataAccount,
      signing: dataSigning,
    }),
  );
  await writePrivate(
    path(AuthFile.registrantCreds),
    await issue(users.registrant, 'registrant', {
      permissions: registrantPermissions(names),
      account: identityAccount,
      signing: identitySigning,
    }),
  );
  await writePrivate(
    path(AuthFile.operatorCallerCreds),
    // Named like the caller token it acts as: the hub checks the name the server reports for `$operator` calls.
    await issue(users.operator_caller, OPERATOR_CALLER, {
      permissions: operatorCallerPermissions(names),
      account: identityAccount,
      signing: identitySigning,
    }),
  );
  // The system user is signed by the system account itself (it has no signing key): it may do anything there,
  // which is what pushing account JWT updates (revocations) to a running server needs.
  await writePrivate(
    path(AuthFile.systemUserCreds),
    await issue(users.system, 'system', { permissions: ALL, account: systemAccount, signing: systemAccount }),
  );

  await writePrivate(path(AuthFile.operatorJwt), `${operatorJwt}\n`);
  await writePrivate(path(AuthFile.systemAccountJwt), `${systemAccountJwt}\n`);
  await writePrivate(path(AuthFile.dataAccountJwt), `${accountJwts.data}\n`);
  await writePrivate(path(AuthFile.identityAccountJwt), `${accountJwts.identity}\n`);
  await renderDirConfig(dir, manifest, accountJwts);
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

/** Core NATS limits of every account: unlimited, wildcard imports allowed. */
const CORE_LIMITS = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 };

/** Default permissions of both accounts: a user issued without permissions can do nothing. */
const DENY_ALL = { pub: { allow: [], deny: ['>'] }, sub: { allow: [], deny: ['>'] } };

/** The account JWTs of a deployment, re-signed whenever a revocation changes. */
export interface AccountJwts {
  readonly data: string;
  readonly identity: string;
}

/**
 * The data and identity accounts' JWTs:
 * - data: JetStream enabled without limits, its signing key and the hub-service scoped key, the services it exports
 *   to the identity account (`dataAccountServices`), its revocations;
 * - identity: no JetStream, its signing key, the imports of those services, its revocations.
 * Both deny everything by default.
 */
export async function encodeAccounts(manifest: AuthManifest, operatorSigner: KeyPair): Promise<AccountJwts> {
  const names = hubNames(manifest.prefix);
  const hubService: SigningKey = {
    kind: 'user_scope',
    key: manifest.data_account.hub_service_signing_key,
    role: 'hub-service',
    template: { ...jwtPermissions(hubServicePermissions(names)), subs: -1, data: -1, payload: -1 },
  };
  const data: Partial<Account> = {
    signing_keys: [manifest.data_account.signing_key, hubService],
    limits: { ...CORE_LIMITS, mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1 },
    exports: dataAccountExports(names),
    default_permissions: DENY_ALL,
    revocations: { ...manifest.revocations.data },
  };
  const identity: Partial<Account> = {
    signing_keys: [manifest.identity_account.signing_key],
    limits: { ...CORE_LIMITS },
    imports: identityAccountImports(names, manifest.data_account.public_key),
    default_permissions: DENY_ALL,
    revocations: { ...manifest.revocations.identity },
  };
  const signer = { signer: operatorSigner };
  return {
    data: await encodeAccount(manifest.data_account.name, fromPublic(manifest.data_account.public_key), data, signer),
    identity: await encodeAccount(
      manifest.identity_account.name,
      fromPublic(manifest.identity_account.public_key),
      identity,
      signer,
    ),
  };
}

/**
 * Writes `auth.conf` of an auth directory from its operator and system account JWT files and the account JWTs
 * (which change with every revocation).
 */
export async function renderDirConfig(dir: string, manifest: AuthManifest, accounts: AccountJwts): Promise<void> {
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
        [manifest.data_account.public_key]: accounts.data,
        [manifest.identity_account.public_key]: accounts.identity,
      },
    }),
  );
}

/**
 * The revocations a rerun keeps: those of the previous manifest's accounts that still have the same keys. A manifest
 * of the first layout had one hub account: its revocations (identities and service users alike) carry over to both
 * accounts when its key is the data account's.
 */
async function previousRevocations(
  path: string,
  keys: { readonly data: string; readonly identity: string },
): Promise<AuthManifest['revocations']> {
  const text = await readIfExists(path);
  if (text === null) return { data: {}, identity: {} };
  const json: unknown = JSON.parse(text);
  const current = AuthManifestSchema.safeParse(json);
  if (current.success) {
    const m = current.data;
    return {
      data: m.data_account.public_key === keys.data ? m.revocations.data : {},
      identity: m.identity_account.public_key === keys.identity ? m.revocations.identity : {},
    };
  }
  const legacy = LegacyAuthManifestSchema.parse(json);
  const carried = legacy.hub_account.public_key === keys.data ? legacy.revocations : {};
  return { data: { ...carried }, identity: { ...carried } };
}

/** The manifest of an auth directory, or `null` when there is none. Throws on a malformed one. */
export async function readManifest(path: string): Promise<AuthManifest | null> {
  const text = await readIfExists(path);
  if (text === null) return null;
  const json: unknown = JSON.parse(text);
  if (LegacyAuthManifestSchema.safeParse(json).success) {
    throw new Error(
      `${path} is of an earlier layout (one account for data and identities): rerun auth init on its directory to upgrade it`,
    );
  }
  return AuthManifestSchema.parse(json);
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
