import { describe, expect, it } from 'vitest';
import { ConfigError, HubServiceConfigSchema, USAGE, loadConfig, operatorLimits } from './config.js';

const DEFAULTS = {
  natsUrl: 'nats://127.0.0.1:4222',
  prefix: 'ag2',
  leaseTtlMs: 6000,
  inviteAckTimeoutMs: 30_000,
  inboxAckWaitMs: 6_000,
  sweepIntervalMs: 1000,
  replicas: 1,
  partitions: 1,
  logLevel: 'info',
};

/** Every setting: its flag, its environment variable, a valid raw value and what it parses to. */
const SETTINGS = [
  {
    key: 'natsUrl',
    flag: 'nats-url',
    env: 'NATS_URL',
    raw: 'nats://nats.internal:4223',
    value: 'nats://nats.internal:4223',
  },
  { key: 'prefix', flag: 'prefix', env: 'AG2NET_PREFIX', raw: 'tenant_b', value: 'tenant_b' },
  { key: 'hubId', flag: 'hub-id', env: 'AG2NET_HUB_ID', raw: 'hub-2', value: 'hub-2' },
  { key: 'creds', flag: 'creds', env: 'NATS_CREDS', raw: '/etc/nats/hub.creds', value: '/etc/nats/hub.creds' },
  { key: 'user', flag: 'user', env: 'NATS_USER', raw: 'hub', value: 'hub' },
  { key: 'password', flag: 'password', env: 'NATS_PASSWORD', raw: 's3cret', value: 's3cret' },
  { key: 'token', flag: 'token', env: 'NATS_TOKEN', raw: 'tok', value: 'tok' },
  { key: 'leaseTtlMs', flag: 'lease-ttl-ms', env: 'AG2NET_LEASE_TTL_MS', raw: '9000', value: 9000 },
  {
    key: 'inviteAckTimeoutMs',
    flag: 'invite-ack-timeout-ms',
    env: 'AG2NET_INVITE_ACK_TIMEOUT_MS',
    raw: '45000',
    value: 45_000,
  },
  { key: 'inboxAckWaitMs', flag: 'inbox-ack-wait-ms', env: 'AG2NET_INBOX_ACK_WAIT_MS', raw: '5000', value: 5000 },
  { key: 'sweepIntervalMs', flag: 'sweep-interval-ms', env: 'AG2NET_SWEEP_INTERVAL_MS', raw: '250', value: 250 },
  { key: 'retainClosedMs', flag: 'retain-closed', env: 'AG2NET_RETAIN_CLOSED', raw: '30d', value: 2_592_000_000 },
  { key: 'replicas', flag: 'replicas', env: 'AG2NET_REPLICAS', raw: '3', value: 3 },
  { key: 'partitions', flag: 'partitions', env: 'AG2NET_PARTITIONS', raw: '8', value: 8 },
  { key: 'logLevel', flag: 'log-level', env: 'LOG_LEVEL', raw: 'debug', value: 'debug' },
  { key: 'httpPort', flag: 'http-port', env: 'AG2NET_HTTP_PORT', raw: '9464', value: 9464 },
  { key: 'postsPerMinute', flag: 'posts-per-minute', env: 'AG2NET_POSTS_PER_MINUTE', raw: '120', value: 120 },
  { key: 'postBurst', flag: 'post-burst', env: 'AG2NET_POST_BURST', raw: '20', value: 20 },
  {
    key: 'maxConcurrentChannels',
    flag: 'max-concurrent-channels',
    env: 'AG2NET_MAX_CONCURRENT_CHANNELS',
    raw: '10',
    value: 10,
  },
  { key: 'maxConcurrentTasks', flag: 'max-concurrent-tasks', env: 'AG2NET_MAX_CONCURRENT_TASKS', raw: '5', value: 5 },
  { key: 'maxPending', flag: 'max-pending', env: 'AG2NET_MAX_PENDING', raw: '200', value: 200 },
  { key: 'delegationDepth', flag: 'delegation-depth', env: 'AG2NET_DELEGATION_DEPTH', raw: '8', value: 8 },
  { key: 'inboxMaxMessages', flag: 'inbox-max-messages', env: 'AG2NET_INBOX_MAX_MESSAGES', raw: '500', value: 500 },
  { key: 'maxMessageBytes', flag: 'max-message-bytes', env: 'AG2NET_MAX_MESSAGE_BYTES', raw: '65536', value: 65_536 },
  {
    key: 'streamMaxBytes',
    flag: 'stream-max-bytes',
    env: 'AG2NET_STREAM_MAX_BYTES',
    raw: '1073741824',
    value: 1_073_741_824,
  },
  {
    key: 'bucketMaxBytes',
    flag: 'bucket-max-bytes',
    env: 'AG2NET_BUCKET_MAX_BYTES',
    raw: '104857600',
    value: 104_857_600,
  },
] as const;

/** The settings of a hub that issues credentials; `--auth-dir` excludes `--creds`, so they are tested apart. */
const AUTH_SETTINGS = [
  { key: 'authDir', flag: 'auth-dir', env: 'AG2NET_AUTH_DIR', raw: '/etc/ag2net/auth', value: '/etc/ag2net/auth' },
  {
    key: 'apiKeys',
    flag: 'api-keys',
    env: 'AG2NET_API_KEYS',
    raw: '/etc/ag2net/keys.json',
    value: '/etc/ag2net/keys.json',
  },
  { key: 'credentialsTtl', flag: 'credentials-ttl', env: 'AG2NET_CREDENTIALS_TTL', raw: '600', value: 600 },
  { key: 'openRegistration', flag: 'open-registration', env: 'AG2NET_OPEN_REGISTRATION', raw: '1', value: true },
] as const;

/** The ConfigError that `loadConfig` throws; fails the test when it returns instead. */
function configError(argv: readonly string[], env: NodeJS.ProcessEnv = {}): ConfigError {
  try {
    const config = loadConfig(argv, env);
    expect.fail(`loadConfig returned ${JSON.stringify(config)} instead of throwing`);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
}

describe('loadConfig', () => {
  it('uses the defaults when neither flags nor the environment set anything', () => {
    expect(loadConfig([], {})).toEqual(DEFAULTS);
  });

  it('covers every key of HubServiceConfigSchema in the settings table', () => {
    expect([...SETTINGS, ...AUTH_SETTINGS].map((s) => s.key).sort()).toEqual(
      Object.keys(HubServiceConfigSchema.shape).sort(),
    );
  });

  it('reads every setting from its environment variable', () => {
    const env = Object.fromEntries(SETTINGS.map((s) => [s.env, s.raw]));
    expect(loadConfig([], env)).toEqual(Object.fromEntries(SETTINGS.map((s) => [s.key, s.value])));
  });

  it('reads every setting from its flag', () => {
    const argv = SETTINGS.flatMap((s) => [`--${s.flag}`, s.raw]);
    expect(loadConfig(argv, {})).toEqual(Object.fromEntries(SETTINGS.map((s) => [s.key, s.value])));
  });

  it('takes a flag over its environment variable and still reads the other variables', () => {
    const config = loadConfig(['--prefix', 'from_flag', '--lease-ttl-ms=7000'], {
      AG2NET_PREFIX: 'from_env',
      AG2NET_LEASE_TTL_MS: '8000',
      AG2NET_REPLICAS: '3',
    });
    expect(config).toEqual({ ...DEFAULTS, prefix: 'from_flag', leaseTtlMs: 7000, replicas: 3 });
  });

  it('treats an empty environment variable as unset', () => {
    const env = Object.fromEntries(SETTINGS.map((s) => [s.env, '']));
    expect(loadConfig([], env)).toEqual(DEFAULTS);
  });

  it('falls back to the environment variable when a flag is given empty', () => {
    expect(loadConfig(['--prefix', ''], { AG2NET_PREFIX: 'envp' })).toEqual({ ...DEFAULTS, prefix: 'envp' });
  });

  it('refuses numbers that are blank, hexadecimal or in exponent notation', () => {
    for (const value of [' ', '0x10', '1e3']) {
      expect(configError([], { AG2NET_SWEEP_INTERVAL_MS: value }).message).toBe(
        'invalid configuration:\n  --sweep-interval-ms (AG2NET_SWEEP_INTERVAL_MS): expected a whole number',
      );
    }
  });

  it('returns help for --help without validating the other values', () => {
    expect(loadConfig(['--help'], {})).toBe('help');
    expect(loadConfig(['--replicas', '9', '--help'], { LOG_LEVEL: 'loud' })).toBe('help');
  });

  it('rejects an unknown flag with a ConfigError that ends with the usage', () => {
    const err = configError(['--bogus']);
    expect(err.name).toBe('ConfigError');
    expect(err.message).toContain("'--bogus'");
    expect(err.message.endsWith(`\n\n${USAGE}`)).toBe(true);
  });

  it('rejects a positional argument and a flag without its value, with the usage', () => {
    expect(configError(['stray']).message).toContain(`\n\n${USAGE}`);
    expect(configError(['--prefix']).message).toContain(`\n\n${USAGE}`);
  });

  it.each([
    {
      what: 'a prefix with a dot',
      argv: ['--prefix', 'ag2.prod'],
      env: {},
      line: '--prefix (AG2NET_PREFIX): prefix may hold only letters, digits, "_" and "-" (at most 32)',
    },
    {
      what: 'a lease shorter than 300 ms',
      argv: ['--lease-ttl-ms', '5'],
      env: {},
      line: '--lease-ttl-ms (AG2NET_LEASE_TTL_MS): Too small: expected number to be >=300',
    },
    {
      what: 'more than 5 replicas, from the environment',
      argv: [],
      env: { AG2NET_REPLICAS: '9' },
      line: '--replicas (AG2NET_REPLICAS): Too big: expected number to be <=5',
    },
    {
      what: 'an unknown log level',
      argv: ['--log-level', 'loud'],
      env: {},
      line:
        '--log-level (LOG_LEVEL): Invalid option: expected one of ' +
        '"trace"|"debug"|"info"|"warn"|"error"|"fatal"|"silent"',
    },
    {
      what: 'a retention shorter than a minute',
      argv: ['--retain-closed', '59s'],
      env: {},
      line: '--retain-closed (AG2NET_RETAIN_CLOSED): expected at least 1m',
    },
    {
      what: 'a retention that is no duration, from the environment',
      argv: [],
      env: { AG2NET_RETAIN_CLOSED: 'a month' },
      line: '--retain-closed (AG2NET_RETAIN_CLOSED): expected a duration: seconds, or <n>s, <n>m, <n>h, <n>d (30d)',
    },
    {
      what: 'a non-numeric lease, from the environment',
      argv: [],
      env: { AG2NET_LEASE_TTL_MS: 'soon' },
      line: '--lease-ttl-ms (AG2NET_LEASE_TTL_MS): expected a whole number',
    },
  ])('rejects $what, naming the flag and the environment variable', ({ argv, env, line }) => {
    expect(configError(argv, env).message).toBe(`invalid configuration:\n  ${line}`);
  });

  it('takes a partition count from 1 to 256, from the flag or the environment', () => {
    for (const [raw, value] of [
      ['1', 1],
      ['2', 2],
      ['8', 8],
      ['256', 256],
    ] as const) {
      expect(loadConfig(['--partitions', raw], {})).toEqual({ ...DEFAULTS, partitions: value });
      expect(loadConfig([], { AG2NET_PARTITIONS: raw })).toEqual({ ...DEFAULTS, partitions: value });
    }
    expect(loadConfig(['--partitions', '4'], { AG2NET_PARTITIONS: '16' })).toEqual({ ...DEFAULTS, partitions: 4 });
  });

  it.each([
    { raw: '0', message: 'expected 1 to 256 partitions' },
    { raw: '257', message: 'expected 1 to 256 partitions' },
    { raw: '-1', message: 'expected a whole number' },
    { raw: '2.5', message: 'expected a whole number' },
    { raw: 'eight', message: 'expected a whole number' },
    { raw: '0x8', message: 'expected a whole number' },
  ])('refuses $raw partitions, from the flag and from the environment', ({ raw, message }) => {
    const line = `invalid configuration:\n  --partitions (AG2NET_PARTITIONS): ${message}`;
    expect(configError([`--partitions=${raw}`]).message).toBe(line);
    expect(configError([], { AG2NET_PARTITIONS: raw }).message).toBe(line);
  });

  it('lists every invalid value on its own line', () => {
    expect(configError(['--lease-ttl-ms', '5', '--replicas', '9']).message).toBe(
      'invalid configuration:\n' +
        '  --lease-ttl-ms (AG2NET_LEASE_TTL_MS): Too small: expected number to be >=300\n' +
        '  --replicas (AG2NET_REPLICAS): Too big: expected number to be <=5',
    );
  });
});

describe('the settings of a hub that issues credentials', () => {
  it('reads the auth directory, API keys and lifetime from flags and the environment', () => {
    const argv = ['--auth-dir', '/a', '--api-keys', '/k.json', '--credentials-ttl', '600'];
    expect(loadConfig(argv, {})).toEqual({ ...DEFAULTS, authDir: '/a', apiKeys: '/k.json', credentialsTtl: 600 });
    const env = { AG2NET_AUTH_DIR: '/a', AG2NET_API_KEYS: '/k.json', AG2NET_CREDENTIALS_TTL: '60' };
    expect(loadConfig([], env)).toEqual({ ...DEFAULTS, authDir: '/a', apiKeys: '/k.json', credentialsTtl: 60 });
  });

  it('takes --open-registration as a switch, and true, false, 1 or 0 from the environment', () => {
    expect(loadConfig(['--auth-dir', '/a', '--open-registration'], {})).toMatchObject({ openRegistration: true });
    for (const [raw, value] of [
      ['true', true],
      ['1', true],
      ['false', false],
      ['0', false],
    ] as const) {
      expect(loadConfig(['--auth-dir', '/a'], { AG2NET_OPEN_REGISTRATION: raw })).toMatchObject({
        openRegistration: value,
      });
    }
    expect(configError(['--auth-dir', '/a'], { AG2NET_OPEN_REGISTRATION: 'yes' }).message).toBe(
      'invalid configuration:\n  --open-registration (AG2NET_OPEN_REGISTRATION): expected true, false, 1 or 0',
    );
  });

  it('refuses admission and lifetime settings without --auth-dir', () => {
    expect(configError(['--api-keys', '/k.json', '--open-registration', '--credentials-ttl', '60']).message).toBe(
      'invalid configuration:\n' +
        '  --api-keys (AG2NET_API_KEYS) needs --auth-dir (AG2NET_AUTH_DIR)\n' +
        '  --open-registration (AG2NET_OPEN_REGISTRATION) needs --auth-dir (AG2NET_AUTH_DIR)\n' +
        '  --credentials-ttl (AG2NET_CREDENTIALS_TTL) needs --auth-dir (AG2NET_AUTH_DIR)\n' +
        '  --api-keys and --open-registration exclude each other: choose one',
    );
  });

  it('refuses other NATS credentials beside --auth-dir, and a lifetime outside 1..86400 seconds', () => {
    expect(configError(['--auth-dir', '/a', '--creds', '/c'], { NATS_TOKEN: 't' }).message).toBe(
      'invalid configuration:\n' +
        '  --creds (NATS_CREDS) cannot go with --auth-dir, which connects with its hub-service.creds\n' +
        '  --token (NATS_TOKEN) cannot go with --auth-dir, which connects with its hub-service.creds',
    );
    expect(configError(['--auth-dir', '/a', '--credentials-ttl', '86401']).message).toBe(
      'invalid configuration:\n  --credentials-ttl (AG2NET_CREDENTIALS_TTL): Too big: expected number to be <=86400',
    );
    expect(configError(['--auth-dir', '/a', '--credentials-ttl', '0']).message).toBe(
      'invalid configuration:\n  --credentials-ttl (AG2NET_CREDENTIALS_TTL): Too small: expected number to be >=1',
    );
  });
});

describe('USAGE', () => {
  it('names every flag with its environment variable, and --help', () => {
    for (const { flag, env } of [...SETTINGS, ...AUTH_SETTINGS])
      expect(USAGE).toMatch(new RegExp(`^  --${flag} +\\(env ${env}\\)$`, 'm'));
    expect(USAGE).toMatch(/^ {2}--help$/m);
  });
});

describe('operatorLimits', () => {
  it('passes on the limits the configuration sets, and only those', () => {
    const config = loadConfig(['--posts-per-minute', '120', '--inbox-max-messages', '500'], {});
    if (config === 'help') throw new Error('unexpected help');
    expect(operatorLimits(config)).toEqual({ postsPerMinute: 120, inboxMaxMessages: 500 });
    const none = loadConfig([], {});
    if (none === 'help') throw new Error('unexpected help');
    expect(operatorLimits(none)).toEqual({});
  });
});
