import { DEFAULT_INBOX_ACK_WAIT_MS, type OperatorLimits } from '@ag2net/hub';
import { DEFAULT_PREFIX, MAX_PARTITIONS, PrefixSchema, parseDuration } from '@ag2net/protocol';
import { ConfigError, describeConfigSource, readServiceConfig } from '@ag2net/telemetry';
import { z } from 'zod';

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** A whole number in decimal digits: flags and env vars are strings, and `" "`, `0x10` or `1e3` are refused. */
const int = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.string().regex(/^\d+$/, 'expected a whole number').transform(Number).pipe(z.number().int().min(min).max(max));

/** A partition count: 1 to `MAX_PARTITIONS`, said in one message whichever end it misses. */
const partitionCount = z
  .string()
  .regex(/^\d+$/, 'expected a whole number')
  .transform(Number)
  .pipe(
    z
      .number()
      .int()
      .min(1, `expected 1 to ${MAX_PARTITIONS} partitions`)
      .max(MAX_PARTITIONS, `expected 1 to ${MAX_PARTITIONS} partitions`),
  );

/** The shortest `--retain-closed`: time to export a channel's log, and for delivery to finish, after it ended. */
const MIN_RETAIN_CLOSED_MS = 60_000;

/** A duration as seconds or `<n>s`, `<n>m`, `<n>h`, `<n>d` (`30d`), at least a minute, in milliseconds. */
const retention = z.string().transform((value, ctx) => {
  let ms: number;
  try {
    ms = parseDuration(value) * 1000;
  } catch {
    ctx.addIssue({ code: 'custom', message: 'expected a duration: seconds, or <n>s, <n>m, <n>h, <n>d (30d)' });
    return z.NEVER;
  }
  if (ms < MIN_RETAIN_CLOSED_MS) ctx.addIssue({ code: 'custom', message: 'expected at least 1m' });
  return ms;
});

/** hub-service configuration, from flags and then the environment. */
export const HubServiceConfigSchema = z.strictObject({
  natsUrl: z.string().min(1).default('nats://127.0.0.1:4222'),
  prefix: PrefixSchema.default(DEFAULT_PREFIX),
  hubId: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/)
    .optional(),
  creds: z.string().min(1).optional(),
  user: z.string().min(1).optional(),
  password: z.string().min(1).optional(),
  token: z.string().min(1).optional(),
  /**
   * An `auth init` directory: connect with its `hub-service.creds` (reply prefix `hubServiceInboxPrefix`) and issue
   * identity credentials with its hub account signing key. Unset: the hub issues no credentials.
   */
  authDir: z.string().min(1).optional(),
  /** A JSON file `{ "<identity name>": "<api key>", … }`: who may register and attach (AG2's `api_key` scheme). */
  apiKeys: z.string().min(1).optional(),
  /** Anyone may register (scheme `none`); instead of `apiKeys`. */
  openRegistration: z
    .enum(['true', 'false', '1', '0'], { error: 'expected true, false, 1 or 0' })
    .transform((v) => v === 'true' || v === '1')
    .optional(),
  /** Lifetime of issued identity credentials, in seconds (default 3 600, at most 86 400). */
  credentialsTtl: int(1, 86_400).optional(),
  leaseTtlMs: int(300).default(6000),
  inviteAckTimeoutMs: int(1).default(30_000),
  inboxAckWaitMs: int(1000).default(DEFAULT_INBOX_ACK_WAIT_MS),
  sweepIntervalMs: int(0).default(1000),
  /** How long an ended channel's history is kept, in ms (from a duration such as `30d`); unset: forever. */
  retainClosedMs: retention.optional(),
  replicas: int(1, 5).default(1),
  /**
   * How many partitions the prefix's channels are spread over, 1 to 256 (default 1: one hub serves, the others stand
   * by). Fixed when the prefix is first provisioned: every hub of a prefix must be started with the same count.
   */
  partitions: partitionCount.default(1),
  logLevel: z.enum(LOG_LEVELS).default('info'),
  /** Port of `/healthz`, `/readyz` and `/metrics`; unset: no HTTP port. */
  httpPort: int(0, 65535).optional(),
  // The operator's limits (docs/governance.md); unset ones take the hub's defaults.
  postsPerMinute: int(1).optional(),
  postBurst: int(1).optional(),
  maxConcurrentChannels: int(1).optional(),
  maxConcurrentTasks: int(1).optional(),
  maxPending: int(1).optional(),
  delegationDepth: int(1).optional(),
  inboxMaxMessages: int(1).optional(),
  maxMessageBytes: int(1024).optional(),
  streamMaxBytes: int(1024 * 1024).optional(),
  bucketMaxBytes: int(1024 * 1024).optional(),
});
export type HubServiceConfig = z.infer<typeof HubServiceConfigSchema>;

/** Flag → environment variable, for the usage text and for reading the environment. */
const SOURCES = {
  natsUrl: ['nats-url', 'NATS_URL'],
  prefix: ['prefix', 'AG2NET_PREFIX'],
  hubId: ['hub-id', 'AG2NET_HUB_ID'],
  creds: ['creds', 'NATS_CREDS'],
  user: ['user', 'NATS_USER'],
  password: ['password', 'NATS_PASSWORD'],
  token: ['token', 'NATS_TOKEN'],
  authDir: ['auth-dir', 'AG2NET_AUTH_DIR'],
  apiKeys: ['api-keys', 'AG2NET_API_KEYS'],
  openRegistration: ['open-registration', 'AG2NET_OPEN_REGISTRATION'],
  credentialsTtl: ['credentials-ttl', 'AG2NET_CREDENTIALS_TTL'],
  leaseTtlMs: ['lease-ttl-ms', 'AG2NET_LEASE_TTL_MS'],
  inviteAckTimeoutMs: ['invite-ack-timeout-ms', 'AG2NET_INVITE_ACK_TIMEOUT_MS'],
  inboxAckWaitMs: ['inbox-ack-wait-ms', 'AG2NET_INBOX_ACK_WAIT_MS'],
  sweepIntervalMs: ['sweep-interval-ms', 'AG2NET_SWEEP_INTERVAL_MS'],
  retainClosedMs: ['retain-closed', 'AG2NET_RETAIN_CLOSED'],
  replicas: ['replicas', 'AG2NET_REPLICAS'],
  partitions: ['partitions', 'AG2NET_PARTITIONS'],
  logLevel: ['log-level', 'LOG_LEVEL'],
  httpPort: ['http-port', 'AG2NET_HTTP_PORT'],
  postsPerMinute: ['posts-per-minute', 'AG2NET_POSTS_PER_MINUTE'],
  postBurst: ['post-burst', 'AG2NET_POST_BURST'],
  maxConcurrentChannels: ['max-concurrent-channels', 'AG2NET_MAX_CONCURRENT_CHANNELS'],
  maxConcurrentTasks: ['max-concurrent-tasks', 'AG2NET_MAX_CONCURRENT_TASKS'],
  maxPending: ['max-pending', 'AG2NET_MAX_PENDING'],
  delegationDepth: ['delegation-depth', 'AG2NET_DELEGATION_DEPTH'],
  inboxMaxMessages: ['inbox-max-messages', 'AG2NET_INBOX_MAX_MESSAGES'],
  maxMessageBytes: ['max-message-bytes', 'AG2NET_MAX_MESSAGE_BYTES'],
  streamMaxBytes: ['stream-max-bytes', 'AG2NET_STREAM_MAX_BYTES'],
  bucketMaxBytes: ['bucket-max-bytes', 'AG2NET_BUCKET_MAX_BYTES'],
} as const satisfies Record<keyof HubServiceConfig, readonly [string, string]>;

/** Settings given as a flag without a value (`--open-registration`); their environment variables say true or false. */
const SWITCHES: ReadonlySet<string> = new Set<keyof HubServiceConfig>(['openRegistration']);

/** The operator's limits for `startHub({ limits })`: only those the configuration sets. */
export function operatorLimits(config: HubServiceConfig): OperatorLimits {
  const keys = [
    'postsPerMinute',
    'postBurst',
    'maxConcurrentChannels',
    'maxConcurrentTasks',
    'maxPending',
    'delegationDepth',
    'inboxMaxMessages',
    'maxMessageBytes',
    'streamMaxBytes',
    'bucketMaxBytes',
  ] as const satisfies readonly (keyof OperatorLimits & keyof HubServiceConfig)[];
  const limits: { -readonly [K in keyof OperatorLimits]: OperatorLimits[K] } = {};
  for (const key of keys) {
    const value = config[key];
    if (value !== undefined) limits[key] = value;
  }
  return limits;
}

export { ConfigError };

export const USAGE = [
  'usage: ag2net-hub [options]',
  '',
  ...Object.entries(SOURCES).map(([, [flag, env]]) => `  --${flag.padEnd(24)} (env ${env})`),
  '  --help',
].join('\n');

/** A config key as the flag and environment variable that set it: `--nats-url (NATS_URL)`. */
/** Reads the configuration: a flag wins over its environment variable; unset values take their defaults. */
export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv): HubServiceConfig | 'help' {
  const parsed = readServiceConfig(
    { sources: SOURCES, switches: SWITCHES, schema: HubServiceConfigSchema, usage: USAGE },
    argv,
    env,
  );
  if (parsed === 'help') return 'help';
  checkAuth(parsed);
  return parsed;
}

/**
 * Admission and lifetimes belong to a hub that issues credentials, which needs the auth directory; the directory also
 * supplies the connection's credentials, so no other NATS credentials go with it; and API keys and open registration
 * exclude each other.
 */
function checkAuth(config: HubServiceConfig): void {
  const problems: string[] = [];
  if (config.authDir === undefined) {
    for (const key of ['apiKeys', 'openRegistration', 'credentialsTtl'] as const) {
      if (config[key] !== undefined)
        problems.push(`${describeConfigSource(SOURCES, [key])} needs --auth-dir (AG2NET_AUTH_DIR)`);
    }
  } else {
    for (const key of ['creds', 'user', 'password', 'token'] as const) {
      if (config[key] !== undefined) {
        problems.push(
          `${describeConfigSource(SOURCES, [key])} cannot go with --auth-dir, which connects with its hub-service.creds`,
        );
      }
    }
  }
  if (config.apiKeys !== undefined && config.openRegistration === true) {
    problems.push('--api-keys and --open-registration exclude each other: choose one');
  }
  if (problems.length > 0)
    throw new ConfigError(['invalid configuration:', ...problems.map((p) => `  ${p}`)].join('\n'));
}
