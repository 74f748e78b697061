import { AuthFile, authInit, credsServerKey, readManifest, type AuthManifest } from '@ag2net/auth';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

/** The file of API keys `npm start` gives hub-service (`--api-keys`): identity name → key. */
export const API_KEYS_FILE = 'api-keys.json';

/** The API keys of the demo agents only: what the stack's agent-runner is given (`--api-keys`). */
export const RUNNER_API_KEYS_FILE = 'runner-api-keys.json';

/** The API keys of README's and the Python quick start's identities only: what `npm start` hands your own code. */
export const CLIENT_API_KEYS_FILE = 'client-api-keys.json';

/** API keys by identity name, as hub-service reads them. */
export const ApiKeysSchema = z.record(z.string().min(1), z.string().min(1));
export type ApiKeys = z.infer<typeof ApiKeysSchema>;

/** Where the local stack's credentials are. */
export interface StackAuth {
  /** The auth directory (`authInit`'s layout). */
  readonly dir: string;
  readonly manifest: AuthManifest;
  /** The operator's credentials: everything in the data account (the `nats` CLI, `$operator` calls). */
  readonly adminCreds: string;
  /** May call `register` and `health` only: what a process that registers identities connects with. */
  readonly registrantCreds: string;
  /** The API keys file (hub-service's: every identity's) and its keys. */
  readonly apiKeysFile: string;
  readonly apiKeys: ApiKeys;
  /** The demo agents' keys only, for the agent-runner: each process holds the keys of the identities it hosts. */
  readonly runnerApiKeysFile: string;
  /** README's and the Python quick start's keys only, for your own code. */
  readonly clientApiKeysFile: string;
  /** Where each identity's issued credentials are kept (`<name>.creds`, 0600), for this server and prefix. */
  readonly credsDir: string;
}

/** Options of `prepareStackAuth`. */
export interface StackAuthOptions {
  /** The stack's data directory (`.data`): auth in `auth/`, identity credentials in `creds/<server>/<prefix>/`. */
  readonly dataDir: string;
  readonly prefix: string;
  /**
   * Names the server whose registry the identities are in (`nats`, `nats-alt`, or `credsServerKey(url)` of a server
   * someone else runs): credentials issued by one server's hub name identities the others do not know.
   */
  readonly server: string;
  /** Identities that get an API key (kept when the file has one already). */
  readonly identities: readonly string[];
  /** Which of them the agent-runner hosts, and which your own code does: each gets a file with their keys only. */
  readonly hosts: { readonly runner: readonly string[]; readonly client: readonly string[] };
  /**
   * Lay out (or complete) the auth directory with `authInit`, for a nats-server `npm start` starts itself: keys are
   * kept, JWTs re-signed for `prefix`. False for a server someone else runs (`NATS_URL`): its directory must exist
   * already, for the same prefix, since the running server trusts the accounts it was started with.
   */
  readonly init: { readonly port: number; readonly storeDir: string } | null;
}

/** The auth directory, its API keys file and the identities' credentials directory of the local stack. */
export async function prepareStackAuth(options: StackAuthOptions): Promise<StackAuth> {
  const dir = join(options.dataDir, 'auth');
  let manifest: AuthManifest;
  if (options.init !== null) {
    manifest = (
      await authInit({ dir, prefix: options.prefix, port: options.init.port, storeDir: options.init.storeDir })
    ).manifest;
  } else {
    const found = await readManifest(join(dir, AuthFile.manifest));
    if (found === null) {
      throw new Error(
        `${dir} holds no auth layout; run npm start without NATS_URL once, or start that nats-server with ` +
          `${join(dir, AuthFile.serverConf)} (ag2net-auth init --dir ${dir}), or pass --insecure`,
      );
    }
    if (found.prefix !== options.prefix) {
      throw new Error(`${dir} is laid out for prefix ${found.prefix}, not ${options.prefix}`);
    }
    manifest = found;
  }
  const apiKeysFile = join(dir, API_KEYS_FILE);
  const apiKeys = await ensureApiKeys(apiKeysFile, options.identities);
  const runnerApiKeysFile = join(dir, RUNNER_API_KEYS_FILE);
  await writeKeys(runnerApiKeysFile, pick(apiKeys, options.hosts.runner));
  const clientApiKeysFile = join(dir, CLIENT_API_KEYS_FILE);
  await writeKeys(clientApiKeysFile, pick(apiKeys, options.hosts.client));
  const credsDir = join(options.dataDir, 'creds', options.server, options.prefix);
  await mkdir(credsDir, { recursive: true, mode: 0o700 });
  await chmod(join(options.dataDir, 'creds'), 0o700);
  await chmod(credsDir, 0o700);
  return {
    dir,
    manifest,
    adminCreds: join(dir, AuthFile.adminCreds),
    registrantCreds: join(dir, AuthFile.registrantCreds),
    apiKeysFile,
    apiKeys,
    runnerApiKeysFile,
    clientApiKeysFile,
    credsDir,
  };
}

/** The keys of `names` only. */
function pick(keys: ApiKeys, names: readonly string[]): ApiKeys {
  return Object.fromEntries(names.flatMap((n) => (keys[n] === undefined ? [] : [[n, keys[n]]])));
}

/**
 * Reads the API keys file, adds a random key for each identity it lacks, and writes it back owner-only (0600). Keys
 * already there are kept, so identities registered in an earlier run are admitted again.
 */
export async function ensureApiKeys(path: string, identities: readonly string[]): Promise<ApiKeys> {
  const keys = { ...(await readKeys(path)) };
  for (const name of identities) keys[name] ??= randomApiKey();
  await writeKeys(path, keys);
  return keys;
}

/** A fresh API key: 24 random bytes, base64url. */
export function randomApiKey(): string {
  return randomBytes(24).toString('base64url');
}

/** The keys of an API keys file (hub-service's or the bridge's people file), `{}` when there is none. */
export async function readKeys(path: string): Promise<ApiKeys> {
  const text = await readFile(path, 'utf8').catch((err: unknown) => {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return null;
    throw err;
  });
  if (text === null) return {};
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const keys = ApiKeysSchema.safeParse(json);
  if (!keys.success) throw new Error(`${path} does not map names to keys ({ "<name>": "<key>" }); fix or remove it`);
  return keys.data;
}

/**
 * Writes an API keys file owner-only (0600) in one step: the text goes to a file beside it, renamed over it, so that
 * hub-service and the bridge, which re-read their keys files when they change, never read half of one.
 */
export async function writeKeys(path: string, keys: ApiKeys): Promise<void> {
  const next = `${path}.${process.pid}.next`;
  try {
    await writeFile(next, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600 });
    await chmod(next, 0o600);
    await rename(next, path);
  } catch (err) {
    await rm(next, { force: true });
    throw err;
  }
}

/** The `server` of `prepareStackAuth` for a server someone else runs: its URL(s) as a directory name. */
export { credsServerKey };
