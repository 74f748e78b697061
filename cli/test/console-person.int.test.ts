/**
 * A person `ag2net people add` admitted on a stack `npm start` runs is one identity in the terminal and in the web
 * console, in either order: `chat` derives the key the bridge derives from the secret beside the auth directory. The
 * stack here is what `npm start` leaves in `.data/`: the hub admitting by `api-keys.json`, the bridge by
 * `bridge-people.json` (both re-read when they change), the bridge's secret and its console's URL.
 */
import { personSeed, parseCredsFile } from '@ag2net/auth';
import type { Bridge } from '@ag2net/bridge';
import { HubClient, type AgentClient } from '@ag2net/client';
import { EV_TEXT, EnvelopeSchema } from '@ag2net/protocol';
import { waitFor } from '@ag2net/test-support';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { watchPeopleFile } from '../../bridge/src/config.js';
import { apiKeysFileAuthenticator, openApiKeysFile, type ApiKeysFile } from '../../hub-service/src/hub-auth.js';
import { call } from '../../test/support/bridge-http.js';
import { startSecuredStack, type SecuredStack } from '../../test/support/secured-stack.js';
import { startStackBridge } from '../../test/support/stack-bridge.js';
import { echo, text } from './conversation.js';
import { run } from './support.js';

const SECRET = 'the-bridge-secret-npm-start-keeps-in-data-auth';
const QUIET = { info: () => undefined, warn: () => undefined };

let stack: SecuredStack;
let dir: string;
/** The directory `npm start` ran in: `.data/auth/` and `.data/creds/nats-alt/<prefix>/`. */
let cwd: string;
let registrant: HubClient;
let pal: AgentClient;
let bridge: Bridge;
let keysFile: ApiKeysFile;
/** The people the bridge signs in, as the bridge's people file holds them (re-read when it changes). */
const people: Record<string, string> = {};
const watching: Disposable[] = [];

const at = (): string[] => ['--server', stack.url, '--prefix', stack.prefix];
const authDir = (): string => join(cwd, '.data', 'auth');
const identities = (): string => join(cwd, '.data', 'creds', 'nats-alt', stack.prefix);
const seedOf = (name: string): string => personSeed(new TextEncoder().encode(SECRET), name);

const Added = z.object({ name: z.string(), sign_in_url: z.string().nullable() });
const Session = z.object({ token: z.string() });
const Me = z.object({ name: z.string(), agent_id: z.string() });
const ChannelReply = z.object({ channel: z.object({ channel_id: z.string() }) });
const Channels = z.object({ channels: z.array(z.object({ channel_id: z.string() })) });
const Shown = z.looseObject({ passport: z.looseObject({ agent_id: z.string() }) });
const Listed = z.array(z.looseObject({ channel_id: z.string() }));
const WalPage = z.looseObject({ envelopes: z.array(EnvelopeSchema) });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ag2net-cli-console-'));
  cwd = join(dir, 'stack');
  await mkdir(authDir(), { recursive: true, mode: 0o700 });
  await writeFile(join(authDir(), 'api-keys.json'), JSON.stringify({ pal: 'k-pal' }), { mode: 0o600 });
  keysFile = await openApiKeysFile(join(authDir(), 'api-keys.json'));
  watching.push(keysFile.watch(QUIET, { debounceMs: 10 }));
  stack = await startSecuredStack({ hub: { authenticator: apiKeysFileAuthenticator(keysFile) } });
  registrant = await HubClient.connect({
    servers: stack.url,
    prefix: stack.prefix,
    creds: stack.paths.registrantCreds,
  });
  pal = await registrant.register(
    { name: 'pal', auth: { scheme: 'api_key', claim: { token: 'k-pal' } } },
    { credsPath: join(dir, 'pal.creds'), handler: echo },
  );
  await copyFile(stack.paths.registrantCreds, join(authDir(), 'registrant.creds'));
  await copyFile(stack.paths.operatorCallerCreds, join(authDir(), 'operator-caller.creds'));
  await mkdir(identities(), { recursive: true, mode: 0o700 });
  // The bridge's files as npm start lays them out, and the bridge reading them as its --secret and --api-keys.
  await writeFile(join(authDir(), 'bridge-secret'), `${SECRET}\n`, { mode: 0o600 });
  await writeFile(join(authDir(), 'bridge-people.json'), '{}', { mode: 0o600 });
  watching.push(watchPeopleFile({ path: join(authDir(), 'bridge-people.json'), people, log: QUIET, debounceMs: 10 }));
  bridge = await startStackBridge(stack, { apiKeys: people, secret: new TextEncoder().encode(SECRET) });
  await writeFile(join(authDir(), 'console-url'), `${bridge.url}/\n`);
});

afterAll(async () => {
  for (const w of watching) w[Symbol.dispose]();
  await bridge?.close();
  await registrant?.close({ graceMs: 0 });
  await stack?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** `people add <name>`; resolves with the person's key once the hub and the bridge re-read their files. */
async function addPerson(name: string): Promise<{ key: string; signIn: string | null }> {
  const added = await run(['people', 'add', name, '--json'], { cwd });
  expect(added.code).toBe(0);
  const { sign_in_url: signIn } = Added.parse(JSON.parse(added.out));
  const keys = z.record(z.string(), z.string()).parse(JSON.parse(await readFile(keysFile.path, 'utf8')));
  const key = keys[name] ?? '';
  await waitFor(() => keysFile.get(name) === key && people[name] === key, {
    what: `the hub and the bridge re-read the key of ${name}`,
  });
  return { key, signIn };
}

async function signIn(name: string, key: string): Promise<{ token: string; agentId: string }> {
  const reply = await call(bridge.url, '/v1/session', { body: { name, api_key: key } });
  expect(reply.status).toBe(200);
  const { token } = Session.parse(reply.body);
  const me = Me.parse((await call(bridge.url, '/v1/me', { token })).body);
  return { token, agentId: me.agent_id };
}

/** Opens a conversation with pal from the console and says `line` there; resolves with the channel's id. */
async function postFromConsole(token: string, line: string): Promise<string> {
  const opened = await call(bridge.url, '/v1/channels', { token, body: { type: 'conversation', target: 'pal' } });
  expect(opened.status).toBe(201);
  const channelId = ChannelReply.parse(opened.body).channel.channel_id;
  const posted = await call(bridge.url, `/v1/channels/${channelId}/envelopes`, { token, body: { text: line } });
  expect(posted.status).toBe(201);
  return channelId;
}

/** The ids of the channels the signed-in person takes part in, as the console lists them. */
async function consoleChannels(token: string): Promise<string[]> {
  const listed = await call(bridge.url, '/v1/channels?state=closed', { token });
  const open = await call(bridge.url, '/v1/channels?state=active', { token });
  return [...Channels.parse(listed.body).channels, ...Channels.parse(open.body).channels].map((c) => c.channel_id);
}

/** The seed in the person's `.creds` where the stack keeps it. */
async function heldSeed(name: string): Promise<string> {
  return parseCredsFile(await readFile(join(identities(), `${name}.creds`), 'utf8')).seed;
}

/** The ids of the channels `name` takes part in, as `channels ls --as <name>` lists them with the person's `.creds`. */
async function terminalChannels(name: string): Promise<string[]> {
  const ls = await run([...at(), '--as', name, 'channels', 'ls', '--json'], { cwd });
  expect(ls.code).toBe(0);
  return Listed.parse(JSON.parse(ls.out)).map((c) => c.channel_id);
}

async function agentIdOf(name: string): Promise<string> {
  const shown = await run([...at(), 'agents', 'show', name, '--json'], { cwd });
  return Shown.parse(JSON.parse(shown.out)).passport.agent_id;
}

describe('a person people add admitted, in the terminal and the console', () => {
  it('chats from the terminal first, then signs in to the console as the same person and posts there', async () => {
    const { key, signIn: link } = await addPerson('alice');
    expect(link).toBe(`${bridge.url}/#/signin?name=alice&key=${key}`);

    const chat = await run([...at(), '--as', 'alice', 'chat', 'pal'], { cwd, stdin: ['hi from the terminal'] });
    expect([chat.code, chat.err]).toEqual([0, '']);
    expect(chat.out).toMatch(/ pal echo: hi from the terminal$/m);
    expect(await heldSeed('alice')).toBe(seedOf('alice'));
    const terminalId = await agentIdOf('alice');

    const { token, agentId } = await signIn('alice', key);
    expect(agentId).toBe(terminalId);
    const [terminalChannel] = await terminalChannels('alice');
    expect([await consoleChannels(token), terminalChannel]).toEqual([[terminalChannel], expect.any(String)]);

    const consoleChannel = await postFromConsole(token, 'hi from the console');
    const log = await waitFor(
      async () => {
        const wal = await run([...at(), '--as', 'alice', 'wal', consoleChannel, '--json'], { cwd });
        const texts = WalPage.parse(JSON.parse(wal.out)).envelopes.filter((e) => e.event_type === EV_TEXT);
        return texts.length === 2 ? texts : undefined;
      },
      { what: "pal's answer in the console's channel" },
    );
    expect(log.map((e) => [e.sender_id, text(e)])).toEqual([
      [terminalId, 'hi from the console'],
      [pal.agentId, 'echo: hi from the console'],
    ]);
  });

  it('signs in to the console first, then chats from the terminal as the same person while signed in there', async () => {
    const { key } = await addPerson('bob');
    const { token, agentId } = await signIn('bob', key);
    const consoleChannel = await postFromConsole(token, 'hi from the console');

    // The console holds bob's connection (and the inbox it consumes) open: the chat reads its channel's log.
    const chat = await run([...at(), '--as', 'bob', 'chat', 'pal'], { cwd, stdin: ['hi from the terminal'] });
    expect([chat.code, chat.err]).toEqual([0, '']);
    expect(chat.out).toMatch(/ pal echo: hi from the terminal$/m);
    expect(await heldSeed('bob')).toBe(seedOf('bob'));
    expect(await agentIdOf('bob')).toBe(agentId);

    const terminalIds = await terminalChannels('bob');
    expect(terminalIds.sort()).toEqual((await consoleChannels(token)).sort());
    expect([terminalIds.length, terminalIds.includes(consoleChannel)]).toEqual([2, true]);
  });
});

describe('a person whose credentials hold a key of their own', () => {
  it('chats with them, told why the console refuses and that --rekey makes the two one person', async () => {
    const { key } = await addPerson('carol');
    // A chat from before the console's keys: carol registered with a key of her own, kept where the stack keeps it.
    const before = await registrant.attachHuman('carol', {
      passport: { name: 'carol', kind: 'human', auth: { scheme: 'api_key', claim: { token: key } } },
      credsPath: join(identities(), 'carol.creds'),
    });
    const beforeChannel = (await before.open({ type: 'conversation', target: 'pal' })).channelId;
    await before.disconnect({ graceMs: 0 });
    const refused = await call(bridge.url, '/v1/session', { body: { name: 'carol', api_key: key } });
    expect(refused).toEqual({
      status: 401,
      body: { error: { code: 'auth_failed', message: "public_key does not match the key 'carol' registered with" } },
    });

    const chat = await run([...at(), '--as', 'carol', 'chat', 'pal'], { cwd, stdin: ['still me'] });
    expect([chat.code, chat.err]).toEqual([
      0,
      `note: the console cannot sign carol in: ${join('.data', 'creds', 'nats-alt', stack.prefix, 'carol.creds')} ` +
        "holds a key of its own, not the console's\n" +
        "hint: `ag2net chat <agent> --as carol --rekey` registers carol again with the console's key " +
        '(the channels of carol so far stay with the old identity)\n',
    ]);
    expect(chat.out).toMatch(/ pal echo: still me$/m);
    const oldId = await agentIdOf('carol');

    const rekeyed = await run([...at(), '--as', 'carol', 'chat', 'pal', '--rekey'], { cwd, stdin: ['new key'] });
    expect([rekeyed.code, rekeyed.err]).toEqual([0, '']);
    expect(rekeyed.out).toMatch(/ pal echo: new key$/m);
    expect(await heldSeed('carol')).toBe(seedOf('carol'));
    const { agentId } = await signIn('carol', key);
    expect([agentId === oldId, agentId]).toEqual([false, await agentIdOf('carol')]);
    // The channel the old identity left open was closed as it was retired.
    const old = await run([...at(), '--operator', 'channels', 'show', beforeChannel, '--json'], { cwd });
    expect(
      z
        .looseObject({ channel: z.looseObject({ state: z.string(), close_reason: z.string() }) })
        .parse(JSON.parse(old.out)).channel,
    ).toMatchObject({
      state: 'closed',
      close_reason: 'person_rekeyed',
    });
  });

  it('exit 4 when the person is registered with another key whose credentials are not there, saying what to do', async () => {
    const { key } = await addPerson('dan');
    const elsewhere = await registrant.attachHuman('dan', {
      passport: { name: 'dan', kind: 'human', auth: { scheme: 'api_key', claim: { token: key } } },
      credsPath: join(dir, 'dan.creds'),
    });
    await elsewhere.disconnect({ graceMs: 0 });
    const chat = await run([...at(), '--as', 'dan', 'chat', 'pal'], { cwd, stdin: ['hi'] });
    const path = join('.data', 'creds', 'nats-alt', stack.prefix, 'dan.creds');
    expect([chat.code, chat.out, chat.err]).toEqual([
      4,
      '',
      `ag2net: dan is registered with a key of its own, not the one the console derives for dan, and that key's ` +
        `credentials are not at ${path}\n` +
        'hint: put dan.creds from before there (or pass --creds-dir <its directory>) and chat again, adding --rekey ' +
        "to register dan with the console's key; or admit another name: `ag2net people add <name>`\n",
    ]);
  });
});

describe('people add on a stack whose console stopped', () => {
  it('names the people file to sign in with instead of a link, and says the person is one in both', async () => {
    await writeFile(join(authDir(), 'console-url'), 'http://127.0.0.1:1/\n');
    try {
      const added = await run(['people', 'add', 'erin'], { cwd });
      const keys = join('.data', 'auth', 'api-keys.json');
      const peopleFile = join('.data', 'auth', 'bridge-people.json');
      expect([added.code, added.err, added.out]).toEqual([
        0,
        '',
        `admitted erin: a new API key in ${keys} and ${peopleFile}\n` +
          'chat     ag2net chat <agent> --as erin   (e.g. ag2net chat pal --as erin)\n' +
          `console  sign in as erin with the key in ${peopleFile} at the console npm start printed (or pass --console <its url> for a link)\n` +
          'either way, in either order, erin is one person: the same identity and channels\n',
      ]);
    } finally {
      await writeFile(join(authDir(), 'console-url'), `${bridge.url}/\n`);
    }
  });
});
