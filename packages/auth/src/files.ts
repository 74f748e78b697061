import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';

/** File names inside an auth directory. */
export const AuthFile = {
  operatorSeed: 'operator.nk',
  operatorSigningSeed: 'operator-signing.nk',
  systemAccountSeed: 'system-account.nk',
  hubAccountSeed: 'hub-account.nk',
  hubAccountSigningSeed: 'hub-account-signing.nk',
  hubServiceSigningSeed: 'hub-service-signing.nk',
  hubServiceSeed: 'hub-service.nk',
  adminSeed: 'admin.nk',
  registrantSeed: 'registrant.nk',
  systemUserSeed: 'system-user.nk',
  hubServiceCreds: 'hub-service.creds',
  adminCreds: 'admin.creds',
  registrantCreds: 'registrant.creds',
  systemUserCreds: 'system-user.creds',
  operatorJwt: 'operator.jwt',
  systemAccountJwt: 'system-account.jwt',
  hubAccountJwt: 'hub-account.jwt',
  authConf: 'auth.conf',
  serverConf: 'server.conf',
  manifest: 'manifest.json',
} as const;
export type AuthFile = (typeof AuthFile)[keyof typeof AuthFile];

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

/** The text of `path`, or `null` when it does not exist. */
export async function readIfExists(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return null;
    throw err;
  }
}
