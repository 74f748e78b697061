import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';

/**
 * File names inside an auth directory. The data account keeps the file names of the single hub account earlier
 * layouts had (`hub-account.nk`, `hub-account.jwt`): its key is what its JetStream data is stored under, so an
 * upgraded deployment keeps its streams.
 */
export const AuthFile = {
  operatorSeed: 'operator.nk',
  operatorSigningSeed: 'operator-signing.nk',
  systemAccountSeed: 'system-account.nk',
  dataAccountSeed: 'hub-account.nk',
  dataAccountSigningSeed: 'data-account-signing.nk',
  hubServiceSigningSeed: 'hub-service-signing.nk',
  identityAccountSeed: 'identity-account.nk',
  identityAccountSigningSeed: 'identity-account-signing.nk',
  hubServiceSeed: 'hub-service.nk',
  adminSeed: 'admin.nk',
  registrantSeed: 'registrant.nk',
  operatorCallerSeed: 'operator-caller.nk',
  systemUserSeed: 'system-user.nk',
  hubServiceCreds: 'hub-service.creds',
  adminCreds: 'admin.creds',
  registrantCreds: 'registrant.creds',
  operatorCallerCreds: 'operator-caller.creds',
  systemUserCreds: 'system-user.creds',
  operatorJwt: 'operator.jwt',
  systemAccountJwt: 'system-account.jwt',
  dataAccountJwt: 'hub-account.jwt',
  identityAccountJwt: 'identity-account.jwt',
  authConf: 'auth.conf',
  serverConf: 'server.conf',
  manifest: 'manifest.json',
} as const;
export type AuthFile = (typeof AuthFile)[keyof typeof AuthFile];

/**
 * Files of earlier layouts that `auth init` removes: the signing key of the single hub account, which signed every
 * identity, the registrant and the admin into the account that holds the data. It is replaced, not moved, so that
 * no JWT it signed connects anywhere after an upgrade.
 */
export const RETIRED_AUTH_FILES: readonly string[] = ['hub-account-signing.nk'];

/** Creates `dir` (and parents) and sets it to 0700. */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
}

/** Writes `text` to `path` readable by the owner only (0600), also when the file existed with another mode. */
export async function writePrivate(path: string, text: string): Promise<void> {
  await writeFile(path, text, { mode: 0o600 });
  await chmod(path, 0o600);
}

/** Removes `path` when it exists. */
export async function removeIfExists(path: string): Promise<void> {
  await rm(path, { force: true });
}

/** The text of `path`, or `null` when it does not exist. */
export async function readIfExists(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return null;
    throw err;
  }
}
