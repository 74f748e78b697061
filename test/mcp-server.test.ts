/**
 * `ag2net-mcp` over stdio against a real secured stack: an MCP client (the SDK's own) spawns it with an agent
 * identity's `.creds` file, as a model host would, next to an agent-runner hosting a scripted agent and SDK
 * participants. The HTTP side is in mcp-http.test.ts.
 */
import { HubClient, type HumanClient } from '@ag2net/client';
import { EV_TEXT, type Envelope } from '@ag2net/protocol';
import { waitFor } from '@ag2net/test-support';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MCP_MAIN, ROOT, stdioHost, type McpHost } from './support/mcp-host.js';
import { startRunner, type ServiceProcess } from './support/processes.js';
import { startSecuredStack, type SecuredStack } from './support/secured-stack.js';

const ANSWER = 'A log is an append-only sequence of records.';
const NAMES = ['oracle', 'scout', 'alice', 'bob', 'helper'] as const;
const KEYS: Record<string, string> = Object.fromEntries(NAMES.map((n) => [n, `k-${n}-0123456789`]));

/** The passport of `name`, admitted with its API key. */
function passport(name: string): { name: string; auth: { scheme: string; claim: { token: string } } } {
  return { name, auth: { scheme: 'api_key', claim: { token: KEYS[name] ?? '' } } };
}

let stack: SecuredStack;
let dir: string;
let registrant: HubClient;
let alice: HumanClient;
let scoutId: string;
let awayChannel: string;
let runner: ServiceProcess;
let host: McpHost;

const call = (name: string, args: Record<string, unknown>) => host.call(name, args);
const callJson = (name: string, args: Record<string, unknown>) => host.json(name, args);

const ShownSchema = z.object({ sender: z.string(), text: z.string(), channel_id: z.string(), event_type: z.string() });

/** The texts of a channel's messages as `who` may read them. */
async function textsIn(who: HumanClient, channelId: string): Promise<string[]> {
  const envelopes: Envelope[] = await who.readWal(channelId);
  return envelopes.filter((e) => e.event_type === EV_TEXT).map((e) => String(e.event_data['text']));
}

beforeAll(async () => {
  stack = await startSecuredStack({ apiKeys: KEYS });
  dir = await mkdtemp(join(tmpdir(), 'ag2net-mcp-'));
  const config = join(dir, 'agents.yaml');
  const keysFile = join(dir, 'api-keys.json');
  await writeFile(keysFile, JSON.stringify({ oracle: KEYS['oracle'] }));
  await writeFile(
    config,
    [
      'agents:',
      '  - name: oracle',
      '    model: { provider: scripted, script: [' + JSON.stringify(ANSWER) + '] }',
      '',
    ].join('\n'),
  );
  runner = startRunner({
    natsUrl: stack.url,
    prefix: stack.prefix,
    configPath: config,
    name: 'mcp-runner',
    extraArgs: ['--creds', stack.paths.registrantCreds, '--creds-dir', join(dir, 'runner-ids'), '--api-keys', keysFile],
  });
  registrant = await HubClient.connect({
    servers: stack.url,
    prefix: stack.prefix,
    creds: stack.paths.registrantCreds,
  });
  // The identity the model host acts as: registered once with the SDK, its credentials kept in a .creds file.
  const credsPath = join(dir, 'scout.creds');
  const scout = await registrant.register(passport('scout'), { credsPath });
  scoutId = scout.agentId;
  alice = await registrant.registerHuman(passport('alice'));
  // A message that waits in scout's inbox while no process serves scout.
  awayChannel = (await alice.open({ type: 'conversation', target: 'scout' })).channelId;
  await scout.disconnect();
  await alice.send(awayChannel, 'sent while you were away');
  await registrant.registerHuman(passport('bob'));
  await waitFor(() => runner.output().includes('runner ready'), { timeoutMs: 30_000, what: 'the runner ready' });

  host = await stdioHost({
    command: process.execPath,
    args: [...MCP_MAIN, '--creds', credsPath, '--servers', stack.url, '--prefix', stack.prefix, '--log-level', 'info'],
  });
}, 60_000);

afterAll(async () => {
  await host?.close();
  await registrant?.close();
  await runner?.stop();
  await stack?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('ag2net-mcp over stdio', () => {
  it('lists the network tools, each with a bounded input schema', async () => {
    const { tools } = await host.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['say', 'delegate', 'peers', 'channels', 'tasks', 'context', 'inbox']);
    const say = tools.find((t) => t.name === 'say');
    expect(say?.inputSchema.required).toEqual(['channel_id', 'text']);
    expect(JSON.stringify(say?.inputSchema)).toContain('"maxLength":100000');
  });

  it("peers finds the runner's agent and leaves the caller out", async () => {
    const found = z
      .object({ peers: z.array(z.object({ name: z.string(), kind: z.string() })) })
      .parse(await callJson('peers', { query: 'oracle' }));
    expect(found.peers).toEqual([expect.objectContaining({ name: 'oracle', kind: 'agent' })]);
    const all = z.object({ peers: z.array(z.object({ name: z.string() })) }).parse(await callJson('peers', {}));
    expect(all.peers.map((p) => p.name).sort()).toEqual(['alice', 'bob', 'oracle']);
  });

  it('say posts into a channel and the other side receives it', async () => {
    const channel = await alice.open({ type: 'conversation', target: 'scout' });
    const received = alice.nextEnvelope({
      predicate: (e) => e.channel_id === channel.channelId && e.sender_id === scoutId && e.event_type === EV_TEXT,
      timeout: 20_000,
    });
    const posted = z
      .object({ envelope_id: z.string(), channel_id: z.string() })
      .parse(await callJson('say', { channel_id: channel.channelId, text: 'hello from the model host' }));
    const envelope = await received;
    expect(envelope?.event_data['text']).toBe('hello from the model host');
    expect(envelope?.envelope_id).toBe(posted.envelope_id);
  });

  it("delegate asks the runner's agent and returns its exact answer", async () => {
    const { text, isError } = await call('delegate', { target: 'oracle', prompt: 'What is a log?', timeout_s: 30 });
    expect({ text, isError }).toEqual({ text: ANSWER, isError: false });
  });

  it('inbox holds what was sent while no process served the identity', async () => {
    const read = z
      .object({ envelopes: z.array(ShownSchema) })
      .parse(await callJson('inbox', { channel_id: awayChannel }));
    expect(read.envelopes.filter((e) => e.event_type === EV_TEXT).map((e) => [e.sender, e.text])).toEqual([
      ['alice', 'sent while you were away'],
    ]);
  });

  it('inbox returns what an SDK participant sent, once', async () => {
    const channel = await alice.open({ type: 'conversation', target: 'scout' });
    await channel.send('are you there, scout?');
    const arrived = await waitFor(
      async () => {
        const read = z
          .object({ envelopes: z.array(ShownSchema) })
          .parse(await callJson('inbox', { channel_id: channel.channelId }));
        const texts = read.envelopes.filter((e) => e.event_type === EV_TEXT);
        return texts.length > 0 ? texts : undefined;
      },
      { timeoutMs: 20_000, what: "alice's message in scout's inbox" },
    );
    expect(arrived).toEqual([
      expect.objectContaining({ sender: 'alice', text: 'are you there, scout?', channel_id: channel.channelId }),
    ]);
    const again = z
      .object({ envelopes: z.array(ShownSchema) })
      .parse(await callJson('inbox', { channel_id: channel.channelId }));
    expect(again.envelopes.filter((e) => e.event_type === EV_TEXT)).toEqual([]);
  });

  it("channels shows my channels with their participants and whose turn it is, and a resource reads one's transcript", async () => {
    const channel = await alice.open({ type: 'conversation', target: 'scout' });
    await channel.send('a line for the transcript');
    await waitFor(async () => (await textsIn(alice, channel.channelId)).length === 1, { what: 'the line admitted' });
    const listed = z
      .object({ channels: z.array(z.looseObject({ channel_id: z.string() })) })
      .parse(await callJson('channels', { channel_id: channel.channelId }));
    expect(listed.channels).toEqual([
      expect.objectContaining({
        channel_id: channel.channelId,
        type: 'conversation',
        state: 'active',
        turn: 'anyone',
        creator: 'alice',
        participants: [
          { agent_id: alice.agentId, name: 'alice', role: 'initiator' },
          { agent_id: scoutId, name: 'scout', role: 'respondent' },
        ],
      }),
    ]);
    const uri = `ag2net://channels/${channel.channelId}`;
    const { resources } = await host.client.listResources();
    expect(resources.map((r) => r.uri)).toContain(uri);
    const read = await host.client.readResource({ uri });
    const text = z.object({ text: z.string() }).parse(read.contents[0]).text;
    expect(
      text
        .split('\n')
        .slice(1)
        .map((l) => l.replace(/^\[[^\]]+\] /, '')),
    ).toEqual(['alice: a line for the transcript']);
  });
});

describe('ag2net-mcp reads what the hub holds', () => {
  it('context quotes a channel, filtered by text or speaker', async () => {
    const all = z
      .object({ envelopes: z.array(ShownSchema) })
      .parse(await callJson('context', { channel_id: awayChannel, limit: 10 }));
    expect(all.envelopes.map((e) => [e.sender, e.text])).toEqual([['alice', 'sent while you were away']]);
    const byText = z
      .object({ envelopes: z.array(ShownSchema) })
      .parse(await callJson('context', { channel_id: awayChannel, query: 'WHILE YOU' }));
    expect(byText.envelopes).toHaveLength(1);
    const bySpeaker = z
      .object({ envelopes: z.array(ShownSchema) })
      .parse(await callJson('context', { channel_id: awayChannel, speaker: 'scout' }));
    expect(bySpeaker.envelopes).toEqual([]);
  });

  it("peers describe shows an agent's passport and resume, never its auth block", async () => {
    const { text, isError } = await call('peers', { action: 'describe', name: 'oracle' });
    expect(isError).toBe(false);
    expect(z.object({ passport: z.looseObject({ name: z.string() }) }).parse(JSON.parse(text)).passport.name).toBe(
      'oracle',
    );
    expect(text).not.toContain('api_key');
    expect(text).not.toContain(KEYS['oracle']);
  });

  it('tasks lists my tasks and refuses an unknown one by code', async () => {
    expect(await callJson('tasks', {})).toEqual({ tasks: [] });
    expect((await call('tasks', { action: 'get', task_id: '01KZZZZZZZZZZZZZZZZZZZZZZZ' })).text).toMatch(
      /^not_found: /,
    );
  });
});

describe('ag2net-mcp refuses hostile input with a typed tool error and writes nothing', () => {
  it('a 1 MB message is invalid_request and never reaches the channel', async () => {
    const channel = await alice.open({ type: 'conversation', target: 'scout' });
    const { text, isError } = await call('say', { channel_id: channel.channelId, text: 'x'.repeat(1024 * 1024) });
    expect(isError).toBe(true);
    expect(text).toMatch(/^invalid_request: invalid arguments for say: text: /);
    expect(text.length).toBeLessThan(1200);
    expect(await textsIn(alice, channel.channelId)).toEqual([]);
  });

  it('an unknown channel id is not_found', async () => {
    const unknown = '01KZZZZZZZZZZZZZZZZZZZZZZZ';
    expect(await call('say', { channel_id: unknown, text: 'hi' })).toEqual({
      isError: true,
      text: `not_found: channel not found: ${unknown}`,
    });
    expect(await call('context', { channel_id: unknown })).toEqual({
      isError: true,
      text: `not_found: channel not found: ${unknown}`,
    });
  });

  it('a channel I am not in is not_found (the hub does not tell it exists) for say, context and its resource, and nothing is posted', async () => {
    const theirs = await alice.open({ type: 'conversation', target: 'bob' });
    await theirs.send('between alice and bob');
    expect(await call('say', { channel_id: theirs.channelId, text: 'let me in' })).toEqual({
      isError: true,
      text: `not_found: channel not found: ${theirs.channelId}`,
    });
    expect(await call('context', { channel_id: theirs.channelId })).toEqual({
      isError: true,
      text: `not_found: channel not found: ${theirs.channelId}`,
    });
    await expect(host.client.readResource({ uri: `ag2net://channels/${theirs.channelId}` })).rejects.toThrow(
      `not_found: channel not found: ${theirs.channelId}`,
    );
    expect(await textsIn(alice, theirs.channelId)).toEqual(['between alice and bob']);
  });

  it('malformed ids, unknown keys, unknown tools and unknown agents are refused by code', async () => {
    expect((await call('say', { channel_id: '../../etc/passwd', text: 'x' })).text).toMatch(/^invalid_request: /);
    expect((await call('inbox', { limit: 1, extra: true })).text).toMatch(/^invalid_request: /);
    expect((await call('delegate', { target: 'nobody-here', prompt: 'hi' })).text).toMatch(/^not_found: /);
    expect((await call('delegate', { target: 'scout', prompt: 'hi' })).text).toMatch(/^invalid_request: /);
    expect(await call('no-such-tool', {})).toEqual({ isError: true, text: 'not_found: no tool named no-such-tool' });
    expect(host.stderr()).not.toMatch(/SU[A-Z0-9]{50,}|eyJ[\w-]{20,}\.[\w-]{20,}/);
  });
});

describe("ag2net-mcp as docs/mcp.md starts it: npm, the registrant's credentials, a name and the API keys file", () => {
  it('registers the name on the first start and serves it, its inbox included', async () => {
    const keysFile = join(dir, 'all-keys.json');
    await writeFile(keysFile, JSON.stringify(KEYS));
    const doc = await stdioHost({
      command: 'npm',
      args: [
        '--silent',
        '--prefix',
        join(ROOT, 'mcp-server'),
        'start',
        '--',
        '--creds',
        stack.paths.registrantCreds,
        '--name',
        'helper',
        '--api-keys',
        keysFile,
        '--creds-dir',
        join(dir, 'doc-creds'),
        '--servers',
        stack.url,
        '--prefix',
        stack.prefix,
      ],
      cwd: tmpdir(),
    });
    try {
      expect(JSON.parse((await doc.call('peers', { query: 'scout' })).text)).toEqual({
        peers: [expect.objectContaining({ name: 'scout', kind: 'agent' })],
      });
      expect((await stat(join(dir, 'doc-creds', 'helper.creds'))).isFile()).toBe(true);
      const channel = await alice.open({ type: 'conversation', target: 'helper' });
      await channel.send('hello helper');
      const texts = await waitFor(
        async () => {
          const read = z
            .object({ envelopes: z.array(ShownSchema) })
            .parse(JSON.parse((await doc.call('inbox', { channel_id: channel.channelId })).text));
          const found = read.envelopes.filter((e) => e.event_type === EV_TEXT).map((e) => e.text);
          return found.length > 0 ? found : undefined;
        },
        { timeoutMs: 20_000, what: "alice's message in helper's inbox" },
      );
      expect(texts).toEqual(['hello helper']);
    } finally {
      await doc.close();
    }
  });

  it('exits 2 with the code when the hub refuses the admission, naming no key', async () => {
    const child = spawn(
      process.execPath,
      [
        ...MCP_MAIN,
        '--creds',
        stack.paths.registrantCreds,
        '--name',
        'mallory',
        '--api-key',
        'not-the-key-of-mallory',
        '--creds-dir',
        join(dir, 'refused'),
        '--servers',
        stack.url,
        '--prefix',
        stack.prefix,
      ],
      { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toMatch(/^auth_failed: /m);
    expect(stderr).not.toContain('not-the-key-of-mallory');
  });
});
