/**
 * The `ag2net` command on a secured deployment: identity credentials read what the identity may, the operator's
 * read everything, and every refusal (by NATS or by the hub) exits 4.
 */
import { HubClient, type AgentClient, type HumanClient } from '@ag2net/client';
import { createIdentityKeys, credsFile } from '@ag2net/auth';
import { EV_TEXT, EnvelopeSchema, newId } from '@ag2net/protocol';
import { waitFor } from '@ag2net/test-support';
import { chmod, copyFile, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { apiKeysFileAuthenticator, openApiKeysFile, type ApiKeysFile } from '../../hub-service/src/hub-auth.js';
import { startSecuredStack, type SecuredStack } from '../../test/support/secured-stack.js';
import { echo, helloConversation, text } from './conversation.js';
import { jsonLines, run, start } from './support.js';

let stack: SecuredStack;
let dir: string;
let registrant: HubClient;
let bob: AgentClient;
let alice: HumanClient;
let channelId: string;
/** The working directory of the stack's files: `.data/auth/` and `.data/creds/nats-alt/<prefix>/`. */
let cwd: string;
let keysFile: ApiKeysFile;
let watchingKeys: Disposable | undefined;

const KEYS = { alice: 'k-alice', bob: 'k-bob', carol: 'k-carol', dave: 'k-dave' };
const at = (): string[] => ['--server', stack.url, '--prefix', stack.prefix];
const as = (name: string): string[] => [...at(), '--creds', join(dir, `${name}.creds`)];
const operator = (): string[] => [...at(), '--operator', '--creds', stack.paths.adminCreds];
const WalPage = z.looseObject({ envelopes: z.array(EnvelopeSchema) });
/** Where the stack's identities keep their credentials: `npm start`'s server on a port other than 4222. */
const identities = (): string => join(cwd, '.data', 'creds', 'nats-alt', stack.prefix);
const Names = z.array(z.looseObject({ name: z.string() }));

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ag2net-cli-'));
  // The hub admits by the keys file of a stack's auth directory, re-read when it changes (as hub-service does).
  cwd = join(dir, 'stack');
  await mkdir(join(cwd, '.data', 'auth'), { recursive: true, mode: 0o700 });
  keysFile = await writeKeys(join(cwd, '.data', 'auth', 'api-keys.json'), KEYS);
  watchingKeys = keysFile.watch({ info: () => undefined, warn: () => undefined }, { debounceMs: 10 });
  stack = await startSecuredStack({ hub: { authenticator: apiKeysFileAuthenticator(keysFile) } });
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
  // The rest of what `npm start` leaves in .data/: the operator caller's and the registrant's credentials, and the
  // demo person's own (alice's here) under the server a random port on this machine is kept under.
  await copyFile(stack.paths.operatorCallerCreds, join(cwd, '.data', 'auth', 'operator-caller.creds'));
  await copyFile(stack.paths.registrantCreds, join(cwd, '.data', 'auth', 'registrant.creds'));
  await mkdir(identities(), { recursive: true, mode: 0o700 });
  await copyFile(join(dir, 'alice.creds'), join(identities(), 'alice.creds'));
  await chmod(join(identities(), 'alice.creds'), 0o600);
});

afterAll(async () => {
  watchingKeys?.[Symbol.dispose]();
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
    const path = join(credsDir, 'dave.creds');
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

describe('the files of a stack npm start runs, found in .data/', () => {
  it('public reads need no flag: the operator caller’s credentials in .data/auth/', async () => {
    const agents = await run([...at(), 'agents', 'ls', '--json'], { cwd });
    expect(agents.code).toBe(0);
    const admin = await run([...operator(), 'agents', 'ls', '--json']);
    expect(agents.out).toBe(admin.out);
    expect(Names.parse(JSON.parse(agents.out)).map((p) => p.name)).toEqual(
      expect.arrayContaining(['alice', 'bob', 'carol']),
    );
    const health = await run([...at(), 'health', '--json'], { cwd });
    expect([health.code, JSON.parse(health.out)]).toEqual([0, expect.objectContaining({ role: 'active' })]);
  });

  it('--operator reads through the hub on them, and tail asks for admin.creds by its path', async () => {
    const ls = await run([...at(), '--operator', 'channels', 'ls', '--json'], { cwd });
    const admin = await run([...operator(), 'channels', 'ls', '--json']);
    expect([ls.code, ls.out]).toEqual([0, admin.out]);
    expect(ls.out).toContain(channelId);
    const hubs = await run([...at(), '--operator', 'hubs', '--wait', '300', '--json'], { cwd });
    expect([hubs.code, z.looseObject({ hubs: z.array(z.unknown()) }).parse(JSON.parse(hubs.out)).hubs.length]).toEqual([
      0, 1,
    ]);
    const tail = await run([...at(), '--operator', 'tail'], { cwd });
    expect([tail.code, tail.out]).toEqual([4, '']);
    expect(tail.err).toBe(
      'ag2net: tail reads JetStream, which operator-caller.creds may not\n' +
        `hint: pass --creds ${join('.data', 'auth', 'admin.creds')} (the admin's credentials)\n`,
    );
  });

  it('--as <name> reads with the identity’s own credentials from .data/creds/<server>/<prefix>/', async () => {
    const r = await run([...at(), '--as', 'alice', 'wal', channelId.slice(0, 20), '--json'], { cwd });
    expect(r.code).toBe(0);
    const texts = WalPage.parse(JSON.parse(r.out)).envelopes.filter((e) => e.event_type === EV_TEXT);
    expect(texts.map(text).slice(0, 2)).toEqual(['hello', 'echo: hello']);
    const none = await run([...at(), '--as', 'carol', 'channels', 'ls'], { cwd });
    expect([none.code, none.err]).toEqual([
      4,
      `ag2net: no credentials of carol at ${join('.data', 'creds', 'nats-alt', stack.prefix, 'carol.creds')}\n` +
        'hint: pass its .creds with --creds <file>, or --creds-dir <the directory of carol.creds>; --operator reads ' +
        'as the operator\n',
    ]);
  });

  it('--as <name> whose credentials there expired says how to renew them', async () => {
    // What a file left behind looks like an hour after its identity last attached: a JWT past its `exp`.
    const claims = { name: newId(), exp: Math.floor(Date.parse('2025-01-02T03:04:05Z') / 1000) };
    const jwt = ['e30', Buffer.from(JSON.stringify(claims)).toString('base64url'), 'c2ln'].join('.');
    await writeFile(join(identities(), 'stale.creds'), credsFile(jwt, createIdentityKeys().seed), { mode: 0o600 });
    const r = await run([...at(), '--as', 'stale', 'channels', 'ls'], { cwd });
    expect([r.code, r.err]).toEqual([
      4,
      `ag2net: the credentials of stale at ${join('.data', 'creds', 'nats-alt', stack.prefix, 'stale.creds')} ` +
        'expired at 2025-01-02T03:04:05.000Z\n' +
        'hint: `ag2net chat <agent> --as stale` attaches stale again and renews them; --operator reads as the operator\n',
    ]);
  });

  it('without them, the refusal names the files to pass', async () => {
    const r = await run([...at(), 'agents', 'ls']);
    expect([r.code, r.out]).toEqual([4, '']);
    expect(r.err).toBe(
      `ag2net: the server asks for credentials: none were given (--creds, NATS_CREDS) and there is no ${join('.data', 'auth', 'operator-caller.creds')}\n` +
        `hint: pass --creds ${join('.data', 'auth', 'admin.creds')} with --operator to read everything, or an ` +
        `identity's own --creds ${join('.data', 'creds', '<server>', '<prefix>')}/<name>.creds; ` +
        "from another directory, --auth-dir <the stack's .data/auth>\n",
    );
  });

  it('chat as the demo’s person attaches with its credentials there, and with no flag but --as', async () => {
    const r = await run([...at(), '--as', 'alice', 'chat', 'bob'], { cwd, stdin: ['again'] });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/ bob echo: again$/m);
    expect((await readdir(identities())).filter((f) => f !== 'stale.creds')).toEqual(['alice.creds']);
  });

  it('people add admits a new person, who then chats without a restart of the hub', async () => {
    const added = await run(['people', 'add', 'zoe', '--console', 'http://127.0.0.1:8787', '--json'], { cwd });
    expect(added.code).toBe(0);
    const auth = join(cwd, '.data', 'auth');
    const keys = z
      .record(z.string(), z.string())
      .parse(JSON.parse(await readFile(join(auth, 'api-keys.json'), 'utf8')));
    const people = z
      .record(z.string(), z.string())
      .parse(JSON.parse(await readFile(join(auth, 'bridge-people.json'), 'utf8')));
    const key = keys['zoe'] ?? '';
    expect([key.length, { ...keys, zoe: 'new' }, people]).toEqual([32, { ...KEYS, zoe: 'new' }, { zoe: key }]);
    expect(JSON.parse(added.out)).toEqual({
      name: 'zoe',
      added: true,
      api_keys_file: join(auth, 'api-keys.json'),
      people_file: join(auth, 'bridge-people.json'),
      chat: 'ag2net chat <agent> --as zoe',
      sign_in_url: `http://127.0.0.1:8787/#/signin?name=zoe&key=${key}`,
    });
    const modes = await Promise.all(
      ['api-keys.json', 'bridge-people.json'].map(async (f) => (await stat(join(auth, f))).mode & 0o777),
    );
    expect(modes).toEqual([0o600, 0o600]);

    await waitFor(() => keysFile.get('zoe') === key, { what: 'the hub re-read its keys file' });
    const chat = await run([...at(), '--as', 'zoe', 'chat', 'bob'], { cwd, stdin: ['hi from zoe'] });
    expect([chat.code, chat.err]).toEqual([0, '']);
    expect(chat.out).toMatch(/ bob echo: hi from zoe$/m);
    expect((await stat(join(identities(), 'zoe.creds'))).mode & 0o777).toBe(0o600);

    const again = await run(['people', 'add', 'zoe'], { cwd });
    expect([again.code, again.out.split('\n')[0]]).toEqual([
      0,
      `zoe was admitted already; its key is in ${join('.data', 'auth', 'api-keys.json')} and ${join('.data', 'auth', 'bridge-people.json')}`,
    ]);
  });

  it('chat names the flag or the command that fixes a refusal, never an SDK option', async () => {
    const nokey = await run([...at(), '--as', 'yuri', 'chat', 'bob'], { cwd, stdin: ['hi'] });
    expect([nokey.code, nokey.err]).toEqual([
      4,
      "ag2net: auth_failed: auth scheme 'none' is not accepted by this hub: register with scheme 'api_key' and claim { token }\n" +
        'hint: yuri has no admission key: `ag2net people add yuri` gives it one (then chat again), or pass --api-key\n',
    ]);
    // carol is registered, and her credentials are not where the stack keeps them.
    const carol = await run([...at(), '--as', 'carol', 'chat', 'bob'], { cwd, stdin: ['hi'] });
    expect([carol.code, carol.err]).toEqual([
      4,
      `ag2net: carol is registered, and chatting as carol needs its credentials, which are not at ${join('.data', 'creds', 'nats-alt', stack.prefix, 'carol.creds')}\n` +
        'hint: pass --creds-dir <the directory of carol.creds>, or --as <another name>\n',
    ]);
  });
});

/** Writes an API keys file (0600) and opens it as hub-service does. */
async function writeKeys(path: string, keys: Record<string, string>): Promise<ApiKeysFile> {
  await writeFile(path, JSON.stringify(keys), { mode: 0o600 });
  return openApiKeysFile(path);
}
