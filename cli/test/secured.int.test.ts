/**
 * The `ag2net` command on a secured deployment: identity credentials read what the identity may, the operator's
 * read everything, and every refusal (by NATS or by the hub) exits 4.
 */
import { HubClient, type AgentClient, type HumanClient } from '@ag2net/client';
import { EV_TEXT, EnvelopeSchema } from '@ag2net/protocol';
import { waitFor } from '@ag2net/test-support';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startSecuredStack, type SecuredStack } from '../../test/support/secured-stack.js';
import { echo, helloConversation, text } from './conversation.js';
import { jsonLines, run, start } from './support.js';

let stack: SecuredStack;
let dir: string;
let registrant: HubClient;
let bob: AgentClient;
let alice: HumanClient;
let channelId: string;

const KEYS = { alice: 'k-alice', bob: 'k-bob', carol: 'k-carol', dave: 'k-dave' };
const at = (): string[] => ['--server', stack.url, '--prefix', stack.prefix];
const as = (name: string): string[] => [...at(), '--creds', join(dir, `${name}.creds`)];
const operator = (): string[] => [...at(), '--operator', '--creds', stack.paths.adminCreds];
const WalPage = z.looseObject({ envelopes: z.array(EnvelopeSchema) });

beforeAll(async () => {
  stack = await startSecuredStack({ apiKeys: KEYS });
  dir = await mkdtemp(join(tmpdir(), 'ag2net-cli-'));
  registrant = await HubClient.connect({
    servers: stack.url,
    prefix: stack.prefix,
    creds: stack.paths.registrantCreds,
  });
  const auth = (name: keyof typeof KEYS) => ({ scheme: 'api_key', claim: { token: KEYS[name] } });
  bob = await registrant.register(
    { name: 'bob', auth: auth('bob') },
    { credsPath: join(dir, 'bob.creds'), handler: echo },
  );
  alice = await registrant.registerHuman(
    { name: 'alice', auth: auth('alice') },
    { credsPath: join(dir, 'alice.creds') },
  );
  await registrant.registerHuman({ name: 'carol', auth: auth('carol') }, { credsPath: join(dir, 'carol.creds') });
  channelId = await helloConversation(alice);
});

afterAll(async () => {
  await registrant?.close({ graceMs: 0 });
  await stack?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('identity credentials', () => {
  it('read what the identity may see, as the identity the credentials name', async () => {
    const r = await run([...as('alice'), 'wal', channelId, '--json']);
    expect(r.code).toBe(0);
    expect(WalPage.parse(JSON.parse(r.out)).envelopes.map(text).slice(-2)).toEqual(['hello', 'echo: hello']);
    const ls = await run([...as('alice'), 'channels', 'ls', '--json']);
    expect(z.array(z.looseObject({ channel_id: z.string() })).parse(JSON.parse(ls.out))).toEqual([
      expect.objectContaining({ channel_id: channelId }),
    ]);
  });

  it('exit 3 for a channel the identity is not in: the hub answers it as no channel', async () => {
    const r = await run([...as('carol'), 'wal', channelId]);
    expect([r.code, r.out]).toEqual([3, '']);
    expect(r.err).toContain(`not_found: channel not found: ${channelId}`);
  });

  it('exit 4 when NATS refuses: acting as another identity on one’s own credentials', async () => {
    const r = await run([...as('carol'), '--as', 'alice', 'wal', channelId]);
    expect([r.code, r.out]).toEqual([4, '']);
    expect(r.err).toContain('NATS refused');
  });

  it('exit 4 without credentials on a secured server, naming --creds', async () => {
    const r = await run([...at(), 'health']);
    expect(r.code).toBe(4);
    expect(r.err).toContain('--creds');
  });
});

describe('operator credentials', () => {
  it('read every channel, the full log and the audit trail', async () => {
    const ls = await run([...operator(), 'channels', 'ls', '--json']);
    expect(
      z
        .array(z.looseObject({ channel_id: z.string() }))
        .parse(JSON.parse(ls.out))
        .map((c) => c.channel_id),
    ).toEqual([channelId]);
    const wal = await run([...operator(), 'wal', channelId, '--json']);
    expect(WalPage.parse(JSON.parse(wal.out)).envelopes.map(text).slice(-2)).toEqual(['hello', 'echo: hello']);
    const audit = await run([...operator(), 'audit', '--kind', 'agent_registered', '--json']);
    const ids = z
      .array(z.looseObject({ agent_id: z.string() }))
      .parse(JSON.parse(audit.out))
      .map((r) => r.agent_id);
    expect(ids).toEqual(expect.arrayContaining([alice.agentId, bob.agentId]));
  });

  it('tail every admitted envelope live over JetStream', async () => {
    const tail = start([...operator(), 'tail', '--json', '--type', EV_TEXT, '--max', '2'], { tty: true });
    await waitFor(() => tail.err().includes('following every channel'), { what: 'tail started' });
    await alice.send(channelId, 'tailed');
    const r = await tail.done;
    expect([r.code, jsonLines(r.out).map((l) => text(EnvelopeSchema.parse(l)))]).toEqual([
      0,
      ['tailed', 'echo: tailed'],
    ]);
  });

  it('exit 4 for tail on identity credentials, refused by NATS', async () => {
    const r = await run([...as('alice'), '--operator', 'tail']);
    expect([r.code, r.out]).toEqual([4, '']);
  });

  it('exit 4 for --operator on credentials that are not the operator’s', async () => {
    const r = await run([...at(), '--operator', '--creds', stack.paths.registrantCreds, 'channels', 'ls']);
    expect([r.code, r.out]).toEqual([4, '']);
  });
});

describe('chat on a secured hub', () => {
  it('registers the person with the admission key, keeps its credentials at 0600, and reuses them next time', async () => {
    const credsDir = join(dir, 'people');
    const chat = (line: string) =>
      run(
        [
          ...at(),
          '--creds',
          stack.paths.registrantCreds,
          '--as',
          'dave',
          'chat',
          'bob',
          '--api-key',
          KEYS.dave,
          '--creds-dir',
          credsDir,
        ],
        {
          stdin: [line],
        },
      );
    const first = await chat('first');
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/ bob echo: first$/m);
    const path = join(credsDir, `${stack.prefix}-dave.creds`);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const second = await chat('second');
    expect([second.code, /bob echo: second$/m.test(second.out)]).toEqual([0, true]);
    expect(await readFile(path, 'utf8')).toContain('BEGIN USER NKEY SEED');
  });

  it('exit 4 when the admission key is wrong', async () => {
    const r = await run(
      [
        ...at(),
        '--creds',
        stack.paths.registrantCreds,
        '--as',
        'erin',
        'chat',
        'bob',
        '--api-key',
        'wrong',
        '--creds-dir',
        dir,
      ],
      { stdin: ['hi'] },
    );
    expect(r.code).toBe(4);
    expect(r.err).toContain('auth_failed');
  });
});

describe('auth init and credentials', () => {
  it('lays out an auth directory with private files', async () => {
    const authDir = join(dir, 'auth');
    const r = await run(['--prefix', 'demo', 'auth', 'init', '--dir', authDir, '--port', '4333', '--json']);
    const files = z
      .looseObject({ prefix: z.string(), files: z.record(z.string(), z.string()) })
      .parse(JSON.parse(r.out));
    expect([r.code, files.prefix]).toEqual([0, 'demo']);
    const modes = await Promise.all(Object.values(files.files).map(async (f) => (await stat(f)).mode & 0o777));
    expect(modes).toEqual([0o600, 0o600, 0o600, 0o600, 0o600, 0o600]);
    expect(await readFile(files.files['server_conf'] ?? '', 'utf8')).toContain('4333');
  });

  it('issues an identity’s credentials that work, and revokes them on the running server', async () => {
    const out = join(dir, 'carol-issued.creds');
    const issued = await run([
      ...operator(),
      'creds',
      'issue',
      '--dir',
      stack.authDir,
      '--agent',
      'carol',
      '--out',
      out,
      '--json',
    ]);
    const info = z.looseObject({ agent_id: z.string(), public_key: z.string() }).parse(JSON.parse(issued.out));
    expect([issued.code, (await stat(out)).mode & 0o777]).toEqual([0, 0o600]);
    const carolId = (await alice.hub.getAgent('carol')).agent_id;
    expect(info.agent_id).toBe(carolId);

    const before = await run([...at(), '--creds', out, 'channels', 'ls', '--json']);
    expect([before.code, JSON.parse(before.out)]).toEqual([0, []]);

    const revoked = await run([
      ...at(),
      'creds',
      'revoke',
      '--dir',
      stack.authDir,
      '--user',
      info.public_key,
      '--json',
    ]);
    expect([revoked.code, JSON.parse(revoked.out)]).toEqual([
      0,
      { user: info.public_key, account: stack.issuer.accountPublicKey, pushed: true },
    ]);
    const after = await run([...at(), '--creds', out, 'channels', 'ls']);
    expect(after.code).toBe(4);
  });

  it('exit 2 for an auth directory without keys, naming auth init', async () => {
    const r = await run([...operator(), 'creds', 'issue', '--dir', join(dir, 'nowhere'), '--agent', 'carol']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('ag2net auth init');
  });
});
