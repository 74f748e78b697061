import { AuthFile, keysFromSeed, parseCredsFile, readManifest } from '@ag2net/auth';
import { connectWithCreds, uniqueName, waitFor } from '@ag2net/test-support';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { personSeed } from '@ag2net/bridge';
import { API_KEYS_FILE, ApiKeysSchema, CLIENT_API_KEYS_FILE, RUNNER_API_KEYS_FILE } from '../scripts/stack/auth.js';
import { BRIDGE_PEOPLE_FILE, BRIDGE_SECRET_FILE, OPERATOR_KEY_FILE } from '../scripts/stack/bridge.js';
import { CONSOLE_DIST_DIR } from '../scripts/stack/console.js';
import { DEMO_AGENTS, DEMO_PERSON, connectPerson } from '../scripts/stack/demo.js';
import {
  PYTHON_QUICK_START_IDENTITIES,
  README_EXAMPLE_COMMAND,
  README_IDENTITIES,
} from '../scripts/stack/next-steps.js';
import { startService } from './support/processes.js';

/** The demo offline: no model in the environment. */
const OFFLINE = { OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', AG2NET_LLM_BASE_URL: '' };

let data: string;

beforeAll(async () => {
  data = await mkdtemp(join(tmpdir(), 'ag2net-start-'));
});

afterAll(async () => {
  await rm(data, { recursive: true, force: true });
});

const mode = async (path: string): Promise<number> => (await stat(path)).mode & 0o777;

/** The public key of the seed in a `.creds` file. */
const credsKey = async (path: string): Promise<string> =>
  keysFromSeed(parseCredsFile(await readFile(path, 'utf8')).seed).publicKey;

/** The demo person's seed the bridge derives from the secret file's text (as the bridge reads it: trimmed). */
const seedOf = (secretText: string): string => personSeed(new TextEncoder().encode(secretText.trim()), DEMO_PERSON);

/** The public key the bridge derives for the demo's person from the secret in `secretFile`. */
const derivedKey = async (secretFile: string): Promise<string> =>
  keysFromSeed(seedOf(await readFile(secretFile, 'utf8'))).publicKey;

/** `POST /v1/session` on the bridge at `base`: the bearer token of `name`. */
async function signIn(base: string, name: string, key: string): Promise<string> {
  const res = await fetch(new URL('v1/session', base), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, api_key: key }),
  });
  const body: unknown = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  const token = typeof body === 'object' && body !== null && 'token' in body ? body.token : undefined;
  if (typeof token !== 'string') throw new Error(`no token in ${JSON.stringify(body)}`);
  return token;
}

describe('npm start', () => {
  it('runs a secured stack, the bridge and the demo, keeps it up for the console and the README example (twice), and runs again over a channel left open', async () => {
    const prefix = uniqueName('start');
    // No NATS_URL: it starts its own nats-server, in operator mode with the auth it lays out.
    const env = { ...OFFLINE, NATS_URL: '', NATS_CREDS: '' };
    const args = ['--prefix', prefix, '--data-dir', data];
    const first = startService('start', 'scripts/start.ts', args, env);
    await waitFor(() => first.output().includes(README_EXAMPLE_COMMAND) || first.child.exitCode !== null, {
      what: 'the stack to say what to export',
      timeoutMs: 120_000,
    });
    const out = first.output();
    const url = /listens on (nats:\/\/\S+)/.exec(out)?.[1];
    if (url === undefined) throw new Error(`no nats-server URL in:\n${out}`);
    const authDir = join(data, 'auth');
    // The identities' credentials are kept per server: this one's store is nats/, or nats-alt/ when 4222 was taken.
    const credsDir = join(data, 'creds', url.endsWith(':4222') ? 'nats' : 'nats-alt', prefix);
    expect(out).toContain(`· NATS auth in ${authDir}`);
    expect(out).toContain('· agents answer with the scripted offline model');
    for (const step of ['1/4 consulting', '2/4 conversation', '3/4 discussion', '4/4 workflow'])
      expect(out).toContain(step);
    expect(out).toContain('· channel closed: consulting_complete');
    expect(out).toContain('workflow ended: resolved');
    expect(out).not.toContain('--insecure');
    // Two hubs, each serving a share of the 8 partitions of the new prefix, and the lines that say which.
    expect(out).toContain('· starting hub-service twice (hub-1, hub-2): each serves a share of 8 partitions\n');
    const shares =
      /the hubs, each serving a share of the 8 partitions \(docs\/hub-service\.md, "Running N hubs"\):\n {2}hub-1 {2}partitions (\S.*)\n {2}hub-2 {2}partitions (\S.*)\n/.exec(
        out,
      );
    expect(shares, out).not.toBeNull();
    const served = [shares?.[1] ?? '', shares?.[2] ?? ''].flatMap((r) =>
      r.split(', ').flatMap((run) => {
        const [a = 0, b = a] = run.split('-').map(Number);
        return Array.from({ length: b - a + 1 }, (_, i) => a + i);
      }),
    );
    expect(served.sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);

    // The web console: printed before the demo runs, and again at the end with the operator key's file.
    const web = /\n· web console {2}(http:\/\/127\.0\.0\.1:\d+\/) {2}\(sign in: (\S+)\)\n/.exec(out);
    const [consoleUrl, signInUrl] = [web?.[1] ?? '', web?.[2] ?? ''];
    expect(web, out).not.toBeNull();
    expect(out.indexOf('· web console')).toBeLessThan(out.indexOf('1/4 consulting'));
    expect(signInUrl.startsWith(`${consoleUrl}#/signin?`)).toBe(true);
    const link = new URLSearchParams(signInUrl.slice(signInUrl.indexOf('?') + 1));
    const operatorKeyFile = join(authDir, OPERATOR_KEY_FILE);
    expect(out).toContain(
      `the web console (docs/bridge.md):\n  console         ${consoleUrl}\n  sign in as you  ${signInUrl}\n` +
        `  operator key    ${operatorKeyFile}  (sign in as $operator with it`,
    );
    const registrantCreds = join(authDir, AuthFile.registrantCreds);
    const apiKeysFile = join(authDir, API_KEYS_FILE);
    const clientKeysFile = join(authDir, CLIENT_API_KEYS_FILE);
    expect(out).toContain(`  NATS URL        ${url}\n`);
    expect(out).toContain(`  operator        ${join(authDir, AuthFile.adminCreds)}  (`);
    expect(out).toContain(`  API keys        ${apiKeysFile}  (`);
    const exportLine =
      `  export NATS_URL=${url} AG2NET_PREFIX=${prefix} NATS_CREDS=${registrantCreds} ` +
      `AG2NET_API_KEYS=${clientKeysFile} AG2NET_CREDS_DIR=${credsDir}`;
    expect(out).toContain(`${exportLine}\n  ${README_EXAMPLE_COMMAND}\n`);

    // Secured: nothing connects without credentials; the API keys and issued credentials are the owner's only.
    await expect(connect({ servers: url, maxReconnectAttempts: 0 })).rejects.toThrow(/Authorization Violation/i);
    expect(await mode(apiKeysFile)).toBe(0o600);
    const apiKeys = ApiKeysSchema.parse(JSON.parse(await readFile(apiKeysFile, 'utf8')));
    expect(Object.keys(apiKeys).sort()).toEqual(
      [...DEMO_AGENTS, DEMO_PERSON, ...README_IDENTITIES, ...PYTHON_QUICK_START_IDENTITIES].sort(),
    );
    // Each process holds the keys of the identities it hosts only: the runner the demo agents', your code README's and
    // the Python quick start's.
    const keysOf = async (file: string): Promise<Record<string, string>> =>
      ApiKeysSchema.parse(JSON.parse(await readFile(join(authDir, file), 'utf8')));
    const only = (names: readonly string[]): Record<string, string> =>
      Object.fromEntries(names.map((n) => [n, apiKeys[n] ?? '']));
    expect(await keysOf(RUNNER_API_KEYS_FILE)).toEqual(only(DEMO_AGENTS));
    expect(await keysOf(CLIENT_API_KEYS_FILE)).toEqual(only([...README_IDENTITIES, ...PYTHON_QUICK_START_IDENTITIES]));
    for (const file of [RUNNER_API_KEYS_FILE, CLIENT_API_KEYS_FILE])
      expect(await mode(join(authDir, file))).toBe(0o600);
    // The bridge's people are the demo's person only, with the key the hub admits it with; its files are 0600.
    expect(JSON.parse(await readFile(join(authDir, BRIDGE_PEOPLE_FILE), 'utf8'))).toEqual({
      [DEMO_PERSON]: apiKeys[DEMO_PERSON],
    });
    expect([link.get('name'), link.get('key')]).toEqual([DEMO_PERSON, apiKeys[DEMO_PERSON]]);
    const secretFile = join(authDir, BRIDGE_SECRET_FILE);
    for (const file of [BRIDGE_PEOPLE_FILE, BRIDGE_SECRET_FILE, OPERATOR_KEY_FILE])
      expect(await mode(join(authDir, file))).toBe(0o600);
    // The demo's person holds the key the bridge derives for it: the console's `you` is the demo's `you`.
    expect(await credsKey(join(credsDir, `${DEMO_PERSON}.creds`))).toBe(await derivedKey(secretFile));
    {
      const index = await fetch(consoleUrl);
      expect(index.status).toBe(200);
      expect(await index.text()).toBe(await readFile(join(CONSOLE_DIST_DIR, 'index.html'), 'utf8'));
      const token = await signIn(consoleUrl, link.get('name') ?? '', link.get('key') ?? '');
      const res = await fetch(new URL('v1/channels?state=closed', consoleUrl), {
        headers: { authorization: `Bearer ${token}` },
      });
      const { channels } = z
        .object({ channels: z.array(z.object({ manifest: z.object({ type: z.string() }) })) })
        .parse(await res.json());
      expect(channels.map((c) => c.manifest.type).sort()).toEqual([
        'consulting',
        'conversation',
        'discussion',
        'workflow',
      ]);
      // An agent is no person: it cannot sign in to the bridge, with its own key or any other.
      const refused = await fetch(new URL('v1/session', consoleUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'expert', api_key: apiKeys['expert'] }),
      });
      expect(refused.status).toBe(401);
      // The operator signs in with the key of the printed file.
      await signIn(consoleUrl, '$operator', (await readFile(operatorKeyFile, 'utf8')).trim());
    }
    const issued = (await readdir(credsDir)).sort();
    expect(issued).toEqual([...DEMO_AGENTS, DEMO_PERSON].map((n) => `${n}.creds`).sort());
    for (const file of issued) expect(await mode(join(credsDir, file))).toBe(0o600);
    // The operator's credentials read what the hub wrote.
    {
      const admin = await connectWithCreds({ url, creds: await readFile(join(authDir, AuthFile.adminCreds), 'utf8') });
      const jsm = await jetstreamManager(admin);
      expect((await jsm.streams.info(`${prefix.toUpperCase()}_WAL`)).state.messages).toBeGreaterThan(0);
      await admin.close();
    }

    // The README's SDK example, as written, with what the stack printed: twice, as a reader would try it.
    const exported = Object.fromEntries(
      exportLine
        .trim()
        .split(' ')
        .slice(1)
        .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
    );
    for (const run of [1, 2]) {
      const sdk = startService(`sdk-${run}`, 'test/fixtures/readme/sdk.ts', [], { ...env, ...exported });
      expect(await sdk.exited, sdk.output()).toBe(0);
      expect(sdk.output()).toBe('scholar: A log is append-only.\n');
    }
    expect((await readdir(credsDir)).sort()).toEqual(
      [...DEMO_AGENTS, DEMO_PERSON, ...README_IDENTITIES].map((n) => `${n}.creds`).sort(),
    );

    // A run that stops half-way leaves a conversation with pal open (a conversation ends only when closed).
    {
      const { hub, you } = await connectPerson({
        natsUrl: url,
        prefix,
        auth: { creds: registrantCreds, apiKeys, credsDir, personSeed: seedOf(await readFile(secretFile, 'utf8')) },
      });
      await using _hub = hub;
      const open = await you.open({ type: 'conversation', target: 'pal' });
      await open.send('Are you still there?');
    }
    expect(await first.stop('SIGINT')).toBe(0);
    expect(first.output()).toContain('stopped.');

    // A new secret (as a `.data` from before the person's key was derived): the next run moves `you` to the new key,
    // closing what the identity of the old one left open.
    const oldKey = await credsKey(join(credsDir, `${DEMO_PERSON}.creds`));
    await rm(secretFile);

    const operator = (await readManifest(join(authDir, AuthFile.manifest)))?.operator.public_key;
    const second = startService('start-again', 'scripts/start.ts', ['--exit', ...args], env);
    expect(await second.exited, second.output()).toBe(0);
    const again = second.output();
    expect(again).toContain('· closed 1 channel(s) an earlier run left open');
    expect(again).toContain('· channel closed: consulting_complete');
    expect(again).toContain('workflow ended: resolved');
    expect(again).toContain('stopped.');
    expect(await mode(secretFile)).toBe(0o600);
    const newKey = await credsKey(join(credsDir, `${DEMO_PERSON}.creds`));
    expect(newKey).not.toBe(oldKey);
    expect(newKey).toBe(await derivedKey(secretFile));
    // Run again, it kept its keys, the API keys and the identities' credentials.
    expect((await readManifest(join(authDir, AuthFile.manifest)))?.operator.public_key).toBe(operator);
    expect(ApiKeysSchema.parse(JSON.parse(await readFile(apiKeysFile, 'utf8')))).toEqual(apiKeys);
  }, 240_000);

  it('keeps the demo and the stack going when the model cannot be reached, and the runner logs each cause', async () => {
    // A local port nothing listens on: every model call is refused.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const address = probe.address();
        probe.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
      });
    });
    const key = 'sk-start-test-secret-4242';
    const env = {
      ...OFFLINE,
      NATS_URL: '',
      NATS_CREDS: '',
      AG2NET_LLM_BASE_URL: `http://127.0.0.1:${port}/v1`,
      AG2NET_LLM_MODEL: 'llama-test',
      AG2NET_LLM_API_KEY: key,
    };
    // The data directory of the test above when it ran (its auth is reused), else a new one.
    const runnerLog = join(data, 'logs', 'agent-runner.log');
    const logBefore = (await readFile(runnerLog, 'utf8').catch(() => '')).length;
    const run = startService(
      'start-model-down',
      'scripts/start.ts',
      ['--exit', '--prefix', uniqueName('down'), '--data-dir', data],
      env,
    );
    expect(await run.exited, run.output()).toBe(0);
    const out = run.output();
    expect(out).toContain(
      `· agents answer with llama-test at http://127.0.0.1:${port}/v1; a call that gets no answer within 30 s fails`,
    );
    // Each demo channel shows its agent's failure notice with the cause, and the demo goes on to the next one.
    const failure = `could not answer: the model could not be reached after 3 attempts (ECONNREFUSED 127.0.0.1:${port})`;
    const shown = out.split('\n').filter((l) => l.startsWith('  ') && l.includes('could not answer'));
    expect(shown.map((l) => l.trim())).toEqual([
      `consulting   · expert ${failure}`,
      `conversation · pal ${failure}`,
      `discussion   · critic ${failure}`,
      `workflow     · triage ${failure}`,
    ]);
    expect(out).toContain('workflow ended: turn_failed');
    expect(out).toContain('· the agents could not answer 4 time(s): their model failed.');
    expect(out).toContain('stopped.');
    // The runner's log line of each failed turn names the agent, the channel and the cause, and never the key.
    const log = (await readFile(runnerLog, 'utf8')).slice(logBefore);
    const failed = log
      .split('\n')
      .filter((l) => l.includes('"msg":"turn failed"'))
      .map((l): unknown => JSON.parse(l));
    const Failed = z.object({
      agent: z.string(),
      channel: z.string(),
      code: z.string(),
      cause: z.object({ kind: z.string(), code: z.string(), message: z.string() }),
      attempts: z.number(),
      provider: z.string(),
      model: z.string(),
    });
    expect(failed.map((l) => Failed.parse(l)).sort((a, b) => a.agent.localeCompare(b.agent))).toEqual(
      [
        ['critic', 'discussion'],
        ['expert', 'consulting'],
        ['pal', 'conversation'],
        ['triage', 'workflow'],
      ].map(([agent, channel]) => ({
        agent,
        channel,
        code: 'model_unavailable',
        cause: { kind: 'connection', code: 'ECONNREFUSED', message: `ECONNREFUSED 127.0.0.1:${port}` },
        attempts: 3,
        provider: 'openai-compatible',
        model: 'llama-test',
      })),
    );
    expect(log).not.toContain(key);
    expect(out).not.toContain(key);
  }, 90_000);

  it('shows in the README exactly the SDK example the test above runs', async () => {
    const readme = await readFile('README.md', 'utf8');
    const section = readme.slice(readme.indexOf('## Using the SDK'));
    const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(block).toBe(await readFile('test/fixtures/readme/sdk.ts', 'utf8'));
  });
});
