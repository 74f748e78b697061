import { AuthFile } from '@ag2net/auth';
import { HealthSchema, type Health } from '@ag2net/protocol';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_KEYS_FILE, CLIENT_API_KEYS_FILE } from '../scripts/stack/auth.js';
import { README_EXAMPLE_COMMAND, printNextSteps, type NextStepsOptions } from '../scripts/stack/next-steps.js';

/** The stack's auth as `npm start` run in `/srv/ag2net` lays it out in `dataDir`, paths shown relative to there. */
function stackAuth(dataDir: string, prefix = 'ag2'): NonNullable<NextStepsOptions['auth']> {
  const dir = join(dataDir, 'auth');
  const shown = (path: string): string => {
    const rel = relative('/srv/ag2net', path);
    return rel.startsWith('..') ? path : rel;
  };
  return {
    dir,
    adminCreds: join(dir, AuthFile.adminCreds),
    registrantCreds: join(dir, AuthFile.registrantCreds),
    apiKeysFile: join(dir, API_KEYS_FILE),
    clientApiKeysFile: join(dir, CLIENT_API_KEYS_FILE),
    credsDir: join(dataDir, 'creds', 'nats', prefix),
    shown,
  };
}

const WEB = {
  url: 'http://127.0.0.1:8787/',
  signInUrl: 'http://127.0.0.1:8787/#/signin?name=you&key=k-you',
  operatorKeyFile: '.data/auth/operator-key',
};

/** A hub's health as the roster reports it, holding `held` (each at epoch 2) of `partitions`. */
function hub(hubId: string, partitions: number, held: readonly number[]): Health {
  return HealthSchema.parse({
    hub_id: hubId,
    role: held.length > 0 ? 'active' : 'standby',
    epoch: held.length > 0 ? 2 : 0,
    active_channels: 0,
    registered_agents: 9,
    adapters_loaded: 4,
    uptime_seconds: 30,
    quarantined: 0,
    dead_letters: 0,
    partitions,
    held: held.map((partition) => ({ partition, epoch: 2 })),
  });
}

/** The stack's two hubs, each serving a share of 8 partitions. */
const HUBS = [hub('hub-1', 8, [4, 5, 0, 1]), hub('hub-2', 8, [2, 3, 6, 7])];

function printed(options: Omit<NextStepsOptions, 'say' | 'console' | 'hubs'> & { hubs?: readonly Health[] }): string[] {
  const lines: string[] = [];
  printNextSteps({ hubs: HUBS, ...options, console: WEB, say: (line) => void lines.push(...line.split('\n')) });
  return lines;
}

describe('what npm start prints once the demo ran', () => {
  it('shows the ag2net command without flags on a stack with the defaults, chat as you and people add', () => {
    const auth = stackAuth('/srv/ag2net/.data');
    expect(printed({ natsUrl: 'nats://127.0.0.1:4222', prefix: 'ag2', auth })).toEqual([
      '',
      'the stack keeps running at nats://127.0.0.1:4222 (prefix ag2); press Ctrl-C to stop.',
      'the web console (docs/bridge.md):',
      '  console         http://127.0.0.1:8787/',
      '  sign in as you  http://127.0.0.1:8787/#/signin?name=you&key=k-you',
      '  operator key    .data/auth/operator-key  (sign in as $operator with it: every channel, the audit trail)',
      'the ag2net command, from this directory (docs/operations.md):',
      '  npx ag2net --operator channels  every channel, as the operator (agents, wal <channel>, audit, …: --help)',
      '  npx ag2net --operator hubs      the hubs, the partitions each serves, and the delivery lag',
      '  npx ag2net chat pal --as you    talk to pal as you: a line is a message',
      '  npx ag2net people add <name>    admit a person: an API key, how to chat and the console sign-in link',
      'the hubs, each serving a share of the 8 partitions (docs/hub-service.md, "Running N hubs"):',
      '  hub-1  partitions 0-1, 4-5',
      '  hub-2  partitions 2-3, 6-7',
      'every connection needs credentials (docs/security.md):',
      '  NATS URL        nats://127.0.0.1:4222',
      '  operator        .data/auth/admin.creds  (reads everything; e.g. nats --creds <it> stream ls)',
      '  registrant      .data/auth/registrant.creds  (may only register identities and attach to them)',
      "  API keys        .data/auth/api-keys.json  (every identity's admission key, by name: the hub's)",
      "  your keys       .data/auth/client-api-keys.json  (the keys of README's and the Python quick start's identities)",
      "  identity creds  .data/creds/nats/ag2/  (issued by the hub to the demo's agents and person)",
      'next, in another terminal, run the SDK example of README.md against it:',
      '  export NATS_URL=nats://127.0.0.1:4222 NATS_CREDS=/srv/ag2net/.data/auth/registrant.creds ' +
        'AG2NET_API_KEYS=/srv/ag2net/.data/auth/client-api-keys.json AG2NET_CREDS_DIR=/srv/ag2net/.data/creds/nats/ag2',
      `  ${README_EXAMPLE_COMMAND}`,
    ]);
  });

  it('names the server, prefix and auth directory the command would not find by itself', () => {
    const auth = stackAuth('/tmp/stack', 'demo');
    const lines = printed({ natsUrl: 'nats://127.0.0.1:40123', prefix: 'demo', auth });
    const ag2net = 'npx ag2net --server nats://127.0.0.1:40123 --prefix demo --auth-dir /tmp/stack/auth';
    expect(lines.filter((l) => l.startsWith('  npx ag2net'))).toEqual([
      `  ${ag2net} --operator channels  every channel, as the operator (agents, wal <channel>, audit, …: --help)`,
      `  ${ag2net} --operator hubs      the hubs, the partitions each serves, and the delivery lag`,
      `  ${ag2net} chat pal --as you    talk to pal as you: a line is a message`,
      `  ${ag2net} people add <name>    admit a person: an API key, how to chat and the console sign-in link`,
    ]);
  });

  it('on an insecure stack shows the command without people add, which needs an auth directory', () => {
    const lines = printed({ natsUrl: 'nats://127.0.0.1:4222', prefix: 'ag2', auth: null });
    expect(lines.slice(6)).toEqual([
      'the ag2net command, from this directory (docs/operations.md):',
      '  npx ag2net --operator channels  every channel, as the operator (agents, wal <channel>, audit, …: --help)',
      '  npx ag2net --operator hubs      the hubs, the partitions each serves, and the delivery lag',
      '  npx ag2net chat pal --as you    talk to pal as you: a line is a message',
      'the hubs, each serving a share of the 8 partitions (docs/hub-service.md, "Running N hubs"):',
      '  hub-1  partitions 0-1, 4-5',
      '  hub-2  partitions 2-3, 6-7',
      'next, in another terminal, run the SDK example of README.md against it:',
      '  export NATS_URL=nats://127.0.0.1:4222',
      `  ${README_EXAMPLE_COMMAND}`,
    ]);
  });

  it('on a stack kept at one partition says which hub serves and which stands by, and a hub of none as standby', () => {
    const auth = stackAuth('/srv/ag2net/.data');
    const lines = (hubs: readonly Health[]): string[] => {
      const all = printed({ natsUrl: 'nats://127.0.0.1:4222', prefix: 'ag2', auth, hubs });
      const from = all.findIndex((l) => l.startsWith('the hubs'));
      return from < 0 ? [] : all.slice(from, all.indexOf('every connection needs credentials (docs/security.md):'));
    };
    expect(lines([hub('hub-1', 1, [0]), hub('hub-2', 1, [])])).toEqual([
      'the hubs: one partition, so one serves and the others stand by (docs/hub-service.md):',
      '  hub-1  active',
      '  hub-2  standby',
    ]);
    expect(lines([hub('hub-1', 8, [0, 1, 2, 3, 4, 5, 6, 7]), hub('hub-10', 8, [])])).toEqual([
      'the hubs, each serving a share of the 8 partitions (docs/hub-service.md, "Running N hubs"):',
      '  hub-1   partitions 0-7',
      '  hub-10  no partition (standby)',
    ]);
    expect(lines([])).toEqual([]);
  });
});
