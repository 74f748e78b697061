import { AuthFile, hubServiceInboxPrefix, readManifest } from '@ag2net/auth';
import { apiKeyAuthenticator, openRegistration, type HubOptions } from '@ag2net/hub';
import { formatIssues, hubNames } from '@ag2net/protocol';
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
  const authenticator =
    config.apiKeys !== undefined
      ? apiKeyAuthenticator({ keys: await readApiKeys(config.apiKeys) })
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
  };
}

/** The API keys of an `--api-keys` file. */
export async function readApiKeys(path: string): Promise<Record<string, string>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`--api-keys ${path} cannot be read: ${message(err)}`);
  }
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
