/**
 * The MCP server against a real secured stack: an MCP client (the SDK's own) spawns `ag2net-mcp` with an agent
 * identity's `.creds` file, as a model host would, next to an agent-runner hosting a scripted agent and SDK
 * participants; the same server factory is also served over Streamable HTTP.
 */
import { HubClient, type HumanClient } from '@ag2net/client';
import { connectIdentity, serveMcpHttpRequest, startSession } from '@ag2net/mcp-server';
import { EV_TEXT, type Envelope } from '@ag2net/protocol';
import { waitFor } from '@ag2net/test-support';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startRunner, type ServiceProcess } from './support/processes.js';
import { startStackBridge } from './support/stack-bridge.js';
import { startSecuredStack, type SecuredStack } from './support/secured-stack.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const ANSWER = 'A log is an append-only sequence of records.';
const NAMES = ['oracle', 'scout', 'alice', 'bob', 'web', 'courier', 'carol', 'dana', 'helper'] as const;
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
let mcp: Client;
let stderr = '';

const TextContentSchema = z.object({ type: z.literal('text'), text: z.string() });
const ToolResultSchema = z.looseObject({ content: z.array(z.looseObject({})), isError: z.boolean().optional() });

/** Calls a tool; resolves with its first text and whether it is an error. */
async function call(name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean }> {
  const result = ToolResultSchema.parse(await mcp.callTool({ name, arguments: args }));
  const first = TextContentSchema.parse(result.content[0]);
  return { text: first.text, isError: result.isError === true };
}

/** Calls a tool that answers JSON and parses it. */
async function callJson(name: string, args: Record<string, unknown>): Promise<unknown> {
  const { text, isError } = await call(name, args);
  if (isError) throw new Error(`${name} failed: ${text}`);
  return JSON.parse(text);
}

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

  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      '--conditions=@ag2net/source',
      '--import',
      'tsx',
      'mcp-server/src/main.ts',
      '--creds',
      credsPath,
      '--servers',
      stack.url,
      '--prefix',
      stack.prefix,
      '--log-level',
      'info',
    ],
    cwd: ROOT,
    env: Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined)),
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  mcp = new Client({ name: 'ag2net-test-host', version: '1.0.0' });
  await mcp.connect(transport);
}, 60_000);

afterAll(async () => {
  await mcp?.close();
  await registrant?.close();
  await runner?.stop();
  await stack?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('ag2net-mcp over stdio', () => {
  it('lists the network tools, each with a bounded input schema', async () => {
    const { tools } = await mcp.listTools();
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
    const { resources } = await mcp.listResources();
    expect(resources.map((r) => r.uri)).toContain(uri);
    const read = await mcp.readResource({ uri });
    const text = TextContentSchema.omit({ type: true }).parse(read.contents[0]).text;
    expect(
      text
        .split('\n')
        .slice(1)
        .map((l) => l.replace(/^\[[^\]]+\] /, '')),
    ).toEqual(['alice: a line for the transcript']);
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
    await expect(mcp.readResource({ uri: `ag2net://channels/${theirs.channelId}` })).rejects.toThrow(
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
    expect(stderr).not.toMatch(/SU[A-Z0-9]{50,}|eyJ[\w-]{20,}\.[\w-]{20,}/);
  });
});

describe("ag2net-mcp as docs/mcp.md starts it: npm, the registrant's credentials, a name and the API keys file", () => {
  it('registers the name on the first start and serves it', async () => {
    const keysFile = join(dir, 'all-keys.json');
    await writeFile(keysFile, JSON.stringify(KEYS));
    const host = new Client({ name: 'ag2net-doc-host', version: '1.0.0' });
    const env = Object.fromEntries(
      Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined),
    );
    await host.connect(
      new StdioClientTransport({
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
        env,
        stderr: 'pipe',
      }),
    );
    try {
      const result = ToolResultSchema.parse(await host.callTool({ name: 'peers', arguments: { query: 'scout' } }));
      expect(JSON.parse(TextContentSchema.parse(result.content[0]).text)).toEqual({
        peers: [expect.objectContaining({ name: 'scout', kind: 'agent' })],
      });
      expect((await stat(join(dir, 'doc-creds', 'helper.creds'))).isFile()).toBe(true);
    } finally {
      await host.close();
    }
  });
});

describe('connectIdentity', () => {
  it("registers a new agent with the registrant's credentials, keeps them, and attaches to the same identity next time", async () => {
    const credsDir = join(dir, 'kept');
    const options = {
      credsPath: stack.paths.registrantCreds,
      name: 'courier',
      credsDir,
      apiKey: KEYS['courier'] ?? '',
      servers: stack.url,
      prefix: stack.prefix,
    };
    const first = await connectIdentity(options);
    const firstId = first.participant.agentId;
    expect([first.participant.passport.name, first.participant.passport.kind]).toEqual(['courier', null]);
    await first.close();
    expect((await stat(join(credsDir, 'courier.creds'))).mode & 0o777).toBe(0o600);
    await using again = await connectIdentity(options);
    expect(again.participant.agentId).toBe(firstId);
  });

  it("attaches a person's identity as a person", async () => {
    const credsPath = join(dir, 'carol.creds');
    const carol = await registrant.registerHuman(passport('carol'), { credsPath });
    await carol.disconnect();
    await using identity = await connectIdentity({ credsPath, servers: stack.url, prefix: stack.prefix });
    expect([identity.participant.passport.name, identity.participant.passport.kind]).toEqual(['carol', 'human']);
  });
});

describe('the server factory over Streamable HTTP', () => {
  it('serves an identity over node http: tools listed, peers answered', async () => {
    const credsPath = join(dir, 'web.creds');
    const web = await registrant.register(passport('web'), { credsPath });
    await web.disconnect();
    await using identity = await connectIdentity({ credsPath, servers: stack.url, prefix: stack.prefix });
    await using session = startSession(identity.participant);
    const server: Server = createServer((req, res) => void serveMcpHttpRequest({ req, res, session }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = new Client({ name: 'ag2net-http-test', version: '1.0.0' });
    try {
      const { port } = server.address() as AddressInfo;
      await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
      expect((await client.listTools()).tools).toHaveLength(7);
      const result = ToolResultSchema.parse(await client.callTool({ name: 'peers', arguments: { query: 'oracle' } }));
      expect(JSON.parse(TextContentSchema.parse(result.content[0]).text)).toEqual({
        peers: [expect.objectContaining({ name: 'oracle' })],
      });
    } finally {
      await client.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('MCP on the bridge', () => {
  it('acts as the signed-in person over their own identity, and refuses a request without a token', async () => {
    const bridge = await startStackBridge(stack, { apiKeys: { dana: KEYS['dana'] ?? '' } });
    const client = new Client({ name: 'ag2net-bridge-test', version: '1.0.0' });
    try {
      const signIn = await fetch(`${bridge.url}/v1/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'dana', api_key: KEYS['dana'] }),
      });
      const { token } = z.object({ token: z.string() }).parse(await signIn.json());
      const anonymous = await fetch(`${bridge.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(anonymous.status).toBe(401);

      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${bridge.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      const danaId = (await alice.hub.findAgentId('dana')) ?? '';
      const received = alice.nextEnvelope({
        predicate: (e) => e.sender_id === danaId && e.event_type === EV_TEXT,
        timeout: 20_000,
      });
      const opened = ToolResultSchema.parse(
        await client.callTool({
          name: 'channels',
          arguments: { action: 'open', type: 'conversation', target: 'alice', message: 'dana here, via MCP' },
        }),
      );
      expect(opened.isError).toBeUndefined();
      const envelope = await received;
      expect(envelope?.event_data['text']).toBe('dana here, via MCP');
      const { channel } = z
        .object({ channel: z.looseObject({ channel_id: z.string(), creator: z.string() }) })
        .parse(JSON.parse(TextContentSchema.parse(opened.content[0]).text));
      expect([channel.channel_id, channel.creator]).toEqual([envelope?.channel_id, 'dana']);
    } finally {
      await client.close();
      await bridge.close();
    }
  });
});
