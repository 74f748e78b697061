/**
 * `npm start` against a nats-server someone else runs (`NATS_URL`): secured with the auth directory that server was
 * started with, or `--insecure` against a server without auth.
 */
import { authInit } from '@ag2net/auth';
import { startHub } from '@ag2net/hub';
import { startNatsServer, startSecuredNatsServer, uniqueName, type NatsServer } from '@ag2net/test-support';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credsServerKey } from '../scripts/stack/auth.js';
import {
  BRIDGE_PEOPLE_FILE,
  BRIDGE_SECRET_FILE,
  INSECURE_BRIDGE_DIR,
  OPERATOR_KEY_FILE,
} from '../scripts/stack/bridge.js';
import { startService } from './support/processes.js';

const OFFLINE = { OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', AG2NET_LLM_BASE_URL: '' };

let data: string;
const servers: NatsServer[] = [];

beforeAll(async () => {
  data = await mkdtemp(join(tmpdir(), 'ag2net-start-external-'));
});

afterAll(async () => {
  for (const s of servers) await s.stop();
  await rm(data, { recursive: true, force: true });
});

describe('npm start with NATS_URL', () => {
  it('uses the auth directory the server was started with, and refuses one laid out for another prefix', async () => {
    const prefix = uniqueName('external');
    const dataDir = join(data, 'secured');
    await authInit({ dir: join(dataDir, 'auth'), prefix });
    const nats = await startSecuredNatsServer({ authDir: join(dataDir, 'auth') });
    servers.push(nats);
    const env = { ...OFFLINE, NATS_URL: nats.url };
    const run = startService(
      'start-external',
      'scripts/start.ts',
      ['--exit', '--prefix', prefix, '--data-dir', dataDir],
      env,
    );
    expect(await run.exited, run.output()).toBe(0);
    const out = run.output();
    expect(out).toContain(`· using NATS at ${nats.url}`);
    expect(out).toMatch(
      /\n· web console {2}http:\/\/127\.0\.0\.1:\d+\/ {2}\(sign in: http:\/\/127\.0\.0\.1:\d+\/#\/signin\?name=you&key=\S+\)\n\n1\/4 consulting/,
    );
    expect(out).toContain('workflow ended: resolved');
    expect(out).not.toContain('--insecure');
    // The identities' credentials are kept apart for this server.
    const issued = await readdir(join(dataDir, 'creds', credsServerKey(nats.url), prefix));
    expect(issued).toContain('you.creds');

    const other = startService(
      'start-other-prefix',
      'scripts/start.ts',
      ['--exit', '--prefix', 'other', '--data-dir', dataDir],
      env,
    );
    expect(await other.exited).toBe(1);
    expect(other.output()).toContain(
      `npm start failed: ${join(dataDir, 'auth')} is laid out for prefix ${prefix}, not other\n`,
    );
    expect(other.output()).not.toContain('starting hub-service');
  }, 90_000);

  it('--insecure runs the demo without any auth against a server without auth, and warns loudly', async () => {
    const nats = await startNatsServer();
    servers.push(nats);
    const dataDir = join(data, 'insecure');
    const prefix = uniqueName('insecure');
    // A prefix an earlier version provisioned with one partition: the stack keeps that count, and says so.
    await (await startHub({ servers: nats.url, prefix, sweepIntervalMs: 0 })).close();
    const env = { ...OFFLINE, NATS_URL: nats.url };
    const run = startService(
      'start-insecure',
      'scripts/start.ts',
      ['--insecure', '--exit', '--prefix', prefix, '--data-dir', dataDir],
      env,
    );
    expect(await run.exited, run.output()).toBe(0);
    const out = run.output();
    expect(out.startsWith('\n!!! --insecure: NATS runs WITHOUT AUTHENTICATION.')).toBe(true);
    expect(out).toContain(`· using NATS at ${nats.url}`);
    expect(out).toContain(
      `· prefix ${prefix} was provisioned with 1 partition by an earlier run, and a prefix keeps its count: both hubs ` +
        'run with --partitions 1. For 8, run on a prefix no hub has started on (npm start -- --prefix <new>).\n' +
        '· starting hub-service twice (hub-1, hub-2): one partition, one serves and one stands by\n',
    );
    expect(out).toContain('· channel closed: consulting_complete');
    expect(out).toContain('workflow ended: resolved');
    expect(out).toContain('stopped.');
    expect(out).not.toContain('NATS auth in');
    // The bridge still signs people in with their key: `you`'s, kept with its secret and the operator key.
    expect(out).toMatch(
      /\n· web console {2}http:\/\/127\.0\.0\.1:\d+\/ {2}\(sign in: \S+#\/signin\?name=you&key=\S+\)\n/,
    );
    // Nothing of auth was laid out: the logs and the bridge's files only.
    expect((await readdir(dataDir)).sort()).toEqual(['bridge', 'logs'].sort());
    expect((await readdir(join(dataDir, INSECURE_BRIDGE_DIR))).sort()).toEqual(
      [BRIDGE_PEOPLE_FILE, BRIDGE_SECRET_FILE, OPERATOR_KEY_FILE].sort(),
    );
  }, 90_000);
});
