import { AuthFile, hubServiceInboxPrefix, readManifest } from '@ag2net/auth';
import { apiKeyAuthenticator, openRegistration, type HubOptions } from '@ag2net/hub';
import { formatIssues } from '@ag2net/protocol/internal';
import { hubNames } from '@ag2net/protocol';
import { reloadableFile, type ReloadLogger } from '@ag2net/telemetry';
import { credsAuthenticator, type ConnectionOptions } from '@nats-io/transport-node';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ConfigError, type HubServiceConfig } from './config.js';

/** The API keys file of `--api-keys`: identity name → key. */
export const ApiKeysFileSchema = z.record(z.string().min(1), z.string().min(1));

/** How a hub-service with `--auth-dir` connects, and what its hub issues and admits. */
export interface HubAuth {
  /** The connection's authenticator and reply-inbox prefix (the hub-service user's). */
  readonly connection: Pick<ConnectionOptions, 'authenticator' | 'inboxPrefix'>;
  /** `credentials` and, when configured, `authenticator` of `startHub`. */
  readonly hub: Pick<HubOptions, 'credentials' | 'authenticator'>;
  /** How registrations are admitted, for the start-up log line. */
  readonly admission: 'api-keys' | 'open' | 'none';
  /** The `--api-keys` file the authenticator admits with, to be watched for changes; `null` without one. */
  readonly apiKeys: ApiKeysFile | null;
}

/**
 * Reads what `--auth-dir` (with `--api-keys`, `--open-registration`, `--credentials-ttl`) configures: the
 * hub-service credentials, the hub account's public key (from `manifest.json`, which must be for this prefix) and
 * signing seed, and the authenticator. `null` without `--auth-dir`. Throws `ConfigError` with a message for the
 * person starting the service when a file is missing or malformed.
 */
export async function loadHubAuth(config: HubServiceConfig): Promise<HubAuth | null> {
  const dir = config.authDir;
  if (dir === undefined) return null;
  const manifest = await readManifest(join(dir, AuthFile.manifest)).catch((err: unknown) => {
    throw new ConfigError(`--auth-dir ${dir}: manifest.json is not valid: ${message(err)}`);
  });
  if (manifest === null) {
    throw new ConfigError(`--auth-dir ${dir} holds no manifest.json: lay it out with ag2net-auth init --dir ${dir}`);
  }
  if (manifest.prefix !== config.prefix) {
    throw new ConfigError(
      `--auth-dir ${dir} was laid out for prefix ${manifest.prefix}, not ${config.prefix}: rerun ag2net-auth init --dir ${dir} --prefix ${config.prefix}`,
    );
  }
  const creds = await readRequired(dir, AuthFile.hubServiceCreds);
  const signingSeed = (await readRequired(dir, AuthFile.identityAccountSigningSeed)).trim();
  const admission = config.apiKeys !== undefined ? 'api-keys' : config.openRegistration === true ? 'open' : 'none';
  const apiKeys = config.apiKeys === undefined ? null : await openApiKeysFile(config.apiKeys);
  const authenticator =
    apiKeys !== null
      ? apiKeysFileAuthenticator(apiKeys)
      : config.openRegistration === true
        ? openRegistration()
        : undefined;
  return {
    connection: {
      authenticator: credsAuthenticator(new TextEncoder().encode(creds)),
      inboxPrefix: hubServiceInboxPrefix(hubNames(config.prefix)),
    },
    hub: {
      credentials: {
        accountPublicKey: manifest.identity_account.public_key,
        signingSeed,
        ...(config.credentialsTtl === undefined ? {} : { ttlSeconds: config.credentialsTtl }),
      },
      ...(authenticator === undefined ? {} : { authenticator }),
    },
    admission,
    apiKeys,
  };
}

/** The API keys of an `--api-keys` file. */
export async function readApiKeys(path: string): Promise<Record<string, string>> {
  return parseApiKeys(path, await readText(path));
}

/** What one `ApiKeysFile.reload()` did. */
export type ApiKeysReload =
  | { readonly outcome: 'reloaded'; readonly keys: number }
  | { readonly outcome: 'unchanged' }
  /** The file is unreadable or malformed: the previous keys stay. */
  | { readonly outcome: 'kept'; readonly reason: string };

/**
 * The keys of an `--api-keys` file while the service runs: the last version of the file that parsed. `reload()`
 * reads it again; `watch()` does so whenever it changes, so that a name added to the file (`ag2net people add`) is
 * admitted without a restart.
 */
export interface ApiKeysFile {
  readonly path: string;
  /** The key of `name`, as the file last read well has it. */
  get(name: string): string | undefined;
  /** How many names have a key. */
  readonly size: number;
  /**
   * Reads the file again: `reloaded` when it changed and parses (its keys replace the previous ones whole),
   * `unchanged` when it holds the keys held (or fails as it did last time), `kept` when it is unreadable or malformed
   * (the previous keys stay).
   */
  reload(): Promise<ApiKeysReload>;
  /**
   * Reloads on every change of the file until the returned handle is disposed, logging one `info` line with the
   * number of keys per reload and one `warn` line naming the file per version of it that cannot be used
   * (`ReloadableFile.watch`).
   */
  watch(log: ReloadLogger, options?: { readonly debounceMs?: number }): Disposable;
}

/** Reads an `--api-keys` file for `ApiKeysFile`; a missing or malformed file is a `ConfigError`, as at start. */
export async function openApiKeysFile(path: string): Promise<ApiKeysFile> {
  const keysOf = (text: string): Readonly<Record<string, string>> => parseApiKeys(path, text);
  const file = reloadableFile({
    path,
    initial: keysOf(await readText(path)),
    parse: keysOf,
    describe: {
      kind: 'API keys file',
      held: 'keys',
      reloaded: (keys) => [{ keys: Object.keys(keys).length }, 'API keys reloaded'],
    },
  });
  const size = (): number => Object.keys(file.value).length;
  return {
    path,
    get: (name) => (Object.hasOwn(file.value, name) ? file.value[name] : undefined),
    get size() {
      return size();
    },
    reload: async () => {
      const r = await file.reload();
      return r.outcome === 'reloaded' ? { outcome: 'reloaded', keys: size() } : r;
    },
    watch: (log, options) => file.watch(log, options),
  };
}

/** An authenticator of AG2's `api_key` scheme over a key file's current keys. */
export function apiKeysFileAuthenticator(file: ApiKeysFile): ReturnType<typeof apiKeyAuthenticator> {
  return apiKeyAuthenticator({ resolver: (name) => Promise.resolve(file.get(name) ?? null) });
}

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`--api-keys ${path} cannot be read: ${message(err)}`);
  }
}

function parseApiKeys(path: string, text: string): Record<string, string> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ConfigError(`--api-keys ${path} is not JSON`);
  }
  const parsed = ApiKeysFileSchema.safeParse(json);
  if (!parsed.success) {
    throw new ConfigError(
      formatIssues(`--api-keys ${path} must map identity names to keys ({ "<name>": "<key>" })`, parsed.error.issues),
    );
  }
  return parsed.data;
}

async function readRequired(dir: string, file: AuthFile): Promise<string> {
  try {
    return await readFile(join(dir, file), 'utf8');
  } catch (err) {
    throw new ConfigError(`--auth-dir ${dir}: ${file} cannot be read: ${message(err)}`);
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
