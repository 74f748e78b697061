import { AuthFile } from '@ag2net/auth';
import { formatIssues } from '@ag2net/protocol/internal';
import { DEFAULT_PREFIX, PrefixSchema } from '@ag2net/protocol';
import { ConfigError, readServiceConfig, reloadableFile, type ReloadLogger } from '@ag2net/telemetry';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { DEFAULT_BRIDGE_PORT, type BridgeOptions } from './options.js';

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** A whole number in decimal digits: flags and env vars are strings, and `" "`, `0x10` or `1e3` are refused. */
const int = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.string().regex(/^\d+$/, 'expected a whole number').transform(Number).pipe(z.number().int().min(min).max(max));

/** The bridge's configuration, from flags and then the environment. */
export const BridgeConfigSchema = z.strictObject({
  server: z.string().min(1).default('nats://127.0.0.1:4222'),
  prefix: PrefixSchema.default(DEFAULT_PREFIX),
  host: z.string().min(1).default('127.0.0.1'),
  port: int(0, 65535).default(DEFAULT_BRIDGE_PORT),
  /** The port of `/healthz`, `/readyz` and `/metrics`; unset: none. */
  opsPort: int(0, 65535).optional(),
  /** An `auth init` directory: the registrant's and the operator's credentials come from it (a secured deployment). */
  authDir: z.string().min(1).optional(),
  /** A JSON file `{ "<person>": "<api key>", … }`: who may sign in (the hub must admit the same keys). */
  apiKeys: z.string().min(1).optional(),
  /** A file holding the secret every replica shares (at least 32 bytes): tokens and people's keys derive from it. */
  secret: z.string().min(1).optional(),
  /** A file holding the operator's sign-in key. */
  operatorKey: z.string().min(1).optional(),
  anonymousRead: z
    .enum(['true', 'false', '1', '0'], { error: 'expected true, false, 1 or 0' })
    .transform((v) => v === 'true' || v === '1')
    .optional(),
  tokenTtl: int(60, 86_400).default(3600),
  idleMs: int(1000).default(300_000),
  ratePerMinute: int(1).default(600),
  rateBurst: int(1).default(120),
  signInPerMinute: int(1).default(10),
  signInBurst: int(1).default(20),
  maxBodyBytes: int(1024, 16 * 1024 * 1024).default(256 * 1024),
  pollMs: int(50, 60_000).default(500),
  hubTimeoutMs: int(500, 120_000).default(10_000),
  logLevel: z.enum(LOG_LEVELS).default('info'),
});
export type BridgeConfig = z.infer<typeof BridgeConfigSchema>;

/** Flag → environment variable. */
const SOURCES = {
  server: ['server', 'NATS_URL'],
  prefix: ['prefix', 'AG2NET_PREFIX'],
  host: ['host', 'AG2NET_BRIDGE_HOST'],
  port: ['port', 'AG2NET_BRIDGE_PORT'],
  opsPort: ['ops-port', 'AG2NET_BRIDGE_OPS_PORT'],
  authDir: ['auth-dir', 'AG2NET_AUTH_DIR'],
  apiKeys: ['api-keys', 'AG2NET_API_KEYS'],
  secret: ['secret', 'AG2NET_BRIDGE_SECRET'],
  operatorKey: ['operator-key', 'AG2NET_OPERATOR_KEY'],
  anonymousRead: ['anonymous-read', 'AG2NET_ANONYMOUS_READ'],
  tokenTtl: ['token-ttl', 'AG2NET_TOKEN_TTL'],
  idleMs: ['idle-ms', 'AG2NET_BRIDGE_IDLE_MS'],
  ratePerMinute: ['rate-per-minute', 'AG2NET_BRIDGE_RATE_PER_MINUTE'],
  rateBurst: ['rate-burst', 'AG2NET_BRIDGE_RATE_BURST'],
  signInPerMinute: ['sign-in-per-minute', 'AG2NET_BRIDGE_SIGN_IN_PER_MINUTE'],
  signInBurst: ['sign-in-burst', 'AG2NET_BRIDGE_SIGN_IN_BURST'],
  maxBodyBytes: ['max-body-bytes', 'AG2NET_BRIDGE_MAX_BODY_BYTES'],
  pollMs: ['poll-ms', 'AG2NET_BRIDGE_POLL_MS'],
  hubTimeoutMs: ['hub-timeout-ms', 'AG2NET_BRIDGE_HUB_TIMEOUT_MS'],
  logLevel: ['log-level', 'LOG_LEVEL'],
} as const satisfies Record<keyof BridgeConfig, readonly [string, string]>;

const SWITCHES: ReadonlySet<string> = new Set<keyof BridgeConfig>(['anonymousRead']);

export { ConfigError };

export const USAGE = [
  'usage: ag2net-bridge [options]',
  '',
  ...Object.values(SOURCES).map(([flag, env]) => `  --${flag.padEnd(18)} (env ${env})`),
  '  --help',
].join('\n');

/** Reads the configuration: a flag wins over its environment variable; unset values take their defaults. */
export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv): BridgeConfig | 'help' {
  const parsed = readServiceConfig(
    { sources: SOURCES, switches: SWITCHES, schema: BridgeConfigSchema, usage: USAGE },
    argv,
    env,
  );
  if (parsed === 'help') return 'help';
  if (parsed.authDir !== undefined && parsed.secret === undefined) {
    throw new ConfigError(
      'invalid configuration:\n  --auth-dir needs --secret (AG2NET_BRIDGE_SECRET): people keep one key across replicas and restarts',
    );
  }
  return parsed;
}

const ApiKeysFileSchema = z.record(z.string().min(1).max(128), z.string().min(1).max(1024));

async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read ${what} at ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The people of an `--api-keys` file: name → key; a missing or malformed file is a `ConfigError` naming it. */
export async function readPeopleFile(path: string): Promise<Record<string, string>> {
  return parsePeople(path, await readText(path, 'the API keys'));
}

function parsePeople(path: string, text: string): Record<string, string> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ConfigError(`${path} is not JSON`);
  }
  const keys = ApiKeysFileSchema.safeParse(json);
  if (!keys.success) throw new ConfigError(formatIssues(`${path}: expected { "<name>": "<key>" }`, keys.error.issues));
  // Without a prototype: a name such as `constructor` is a name like any other.
  return Object.assign(Object.create(null) as Record<string, string>, keys.data);
}

/**
 * Re-reads the people file `path` whenever it changes, until the returned handle is disposed, and replaces the
 * entries of `people` (the object `startBridge` was given as `apiKeys`, which the bridge reads at each sign-in) with
 * the file's: a person added to the file (`ag2net people add`) may sign in without a restart. One `info` line with
 * the number of people per reload; a version of the file that cannot be read or parsed keeps the previous people and
 * logs one `warn` line naming the file (`ReloadableFile.watch`).
 */
export function watchPeopleFile(options: {
  readonly path: string;
  readonly people: Record<string, string>;
  readonly log: ReloadLogger;
  /** How long changes must settle before the file is read, in ms (default `DEFAULT_RELOAD_DEBOUNCE_MS`). */
  readonly debounceMs?: number;
}): Disposable {
  const { path, people } = options;
  const file = reloadableFile({
    path,
    initial: { ...people },
    parse: (text) => parsePeople(path, text),
    onReload: (next) => {
      for (const name of Object.keys(people)) delete people[name];
      Object.assign(people, next);
    },
    describe: {
      kind: 'people file',
      held: 'people',
      reloaded: (next) => [{ people: Object.keys(next).length }, 'people reloaded'],
    },
  });
  return file.watch(options.log, options.debounceMs === undefined ? {} : { debounceMs: options.debounceMs });
}

/** The `startBridge` options of a configuration: reads the key, secret and credentials files it names. */
export async function bridgeOptionsOf(config: BridgeConfig): Promise<BridgeOptions> {
  // The same object for the bridge's whole life: `watchPeopleFile` replaces its entries when the file changes.
  const apiKeys: Record<string, string> = config.apiKeys === undefined ? {} : await readPeopleFile(config.apiKeys);
  let secret: Uint8Array | undefined;
  if (config.secret !== undefined) {
    const text = (await readText(config.secret, 'the bridge secret')).trim();
    if (Buffer.byteLength(text) < 32) throw new ConfigError(`${config.secret}: the secret needs at least 32 bytes`);
    secret = new TextEncoder().encode(text);
  }
  const operatorKey =
    config.operatorKey === undefined ? undefined : (await readText(config.operatorKey, 'the operator key')).trim();
  if (operatorKey !== undefined && operatorKey.length < 16) {
    throw new ConfigError(`${config.operatorKey}: the operator key needs at least 16 characters`);
  }
  const auth =
    config.authDir === undefined
      ? {}
      : {
          registrantCreds: await readText(join(config.authDir, AuthFile.registrantCreds), 'the registrant credentials'),
          operatorCreds: await readText(
            join(config.authDir, AuthFile.operatorCallerCreds),
            'the operator caller credentials',
          ),
        };
  return {
    servers: config.server,
    prefix: config.prefix,
    host: config.host,
    port: config.port,
    ...auth,
    apiKeys,
    ...(secret === undefined ? {} : { secret }),
    ...(operatorKey === undefined ? {} : { operatorKey }),
    anonymousRead: config.anonymousRead ?? false,
    tokenTtlSeconds: config.tokenTtl,
    idleMs: config.idleMs,
    ratePerMinute: config.ratePerMinute,
    rateBurst: config.rateBurst,
    signInPerMinute: config.signInPerMinute,
    signInBurst: config.signInBurst,
    maxBodyBytes: config.maxBodyBytes,
    pollMs: config.pollMs,
    hubTimeoutMs: config.hubTimeoutMs,
  };
}
