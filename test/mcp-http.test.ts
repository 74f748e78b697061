/**
 * The MCP server factory over HTTP against a real secured stack: identities reached with `connectIdentity`, the
 * factory served by a plain node http server, and `/mcp` on the bridge as the signed-in person.
 */
import { HubClient, ackInvite, isInviteFor, type HumanClient } from '@ag2net/client';
import { connectIdentity, serveMcpHttpRequest, startSession } from '@ag2net/mcp-server';
import { EV_TEXT } from '@ag2net/protocol';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { httpHost } from './support/mcp-host.js';
import { startSecuredStack, type SecuredStack } from './support/secured-stack.js';
import { startStackBridge } from './support/stack-bridge.js';

const NAMES = ['alice', 'web', 'courier', 'carol', 'dana', 'echoer'] as const;
const KEYS: Record<string, string> = Object.fromEntries(NAMES.map((n) => [n, `k-${n}-0123456789`]));

/** The passport of `name`, admitted with its API key. */
function passport(name: string): { name: string; auth: { scheme: string; claim: { token: string } } } {
  return { name, auth: { scheme: 'api_key', claim: { token: KEYS[name] ?? '' } } };
}

let stack: SecuredStack;
let dir: string;
let registrant: HubClient;
let alice: HumanClient;

beforeAll(async () => {
  stack = await startSecuredStack({ apiKeys: KEYS });
  dir = await mkdtemp(join(tmpdir(), 'ag2net-mcp-http-'));
  registrant = await HubClient.connect({
    servers: stack.url,
    prefix: stack.prefix,
    creds: stack.paths.registrantCreds,
  });
  alice = await registrant.registerHuman(passport('alice'));
  // `echoer` answers every question it is asked, as an agent of the network would.
  await registrant.register(passport('echoer'), {
    handler: async (envelope, client) => {
      if (isInviteFor(client, envelope)) return void (await ackInvite(client, envelope));
      if (envelope.event_type !== EV_TEXT || envelope.sender_id === client.agentId) return;
      await client.send(envelope.channel_id, `echo: ${String(envelope.event_data['text'])}`);
    },
  });
});

afterAll(async () => {
  await registrant?.close();
  await stack?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
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
    const server = createServer((req, res) => void serveMcpHttpRequest({ req, res, session }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const host = await httpHost(`http://127.0.0.1:${port}/mcp`);
      try {
        expect((await host.client.listTools()).tools).toHaveLength(7);
        expect(JSON.parse((await host.call('peers', { query: 'alice' })).text)).toEqual({
          peers: [expect.objectContaining({ name: 'alice', kind: 'human' })],
        });
      } finally {
        await host.close();
      }
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('MCP on the bridge', () => {
  it('acts as the signed-in person over their own identity, and refuses a request without a token', async () => {
    const bridge = await startStackBridge(stack, { apiKeys: { dana: KEYS['dana'] ?? '' } });
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

      const host = await httpHost(`${bridge.url}/mcp`, { authorization: `Bearer ${token}` });
      const danaId = (await alice.hub.findAgentId('dana')) ?? '';
      const received = alice.nextEnvelope({
        predicate: (e) => e.sender_id === danaId && e.event_type === EV_TEXT,
        timeout: 20_000,
      });
      const opened = await host.json('channels', {
        action: 'open',
        type: 'conversation',
        target: 'alice',
        message: 'dana here, via MCP',
      });
      const envelope = await received;
      expect(envelope?.event_data['text']).toBe('dana here, via MCP');
      const { channel } = z
        .object({ channel: z.looseObject({ channel_id: z.string(), creator: z.string() }) })
        .parse(opened);
      expect([channel.channel_id, channel.creator]).toEqual([envelope?.channel_id, 'dana']);
      // delegate: a consulting channel with an agent, its answer returned.
      expect(await host.call('delegate', { target: 'echoer', prompt: 'ping over http', timeout_s: 20 })).toEqual({
        text: 'echo: ping over http',
        isError: false,
      });
      await host.close();
    } finally {
      await bridge.close();
    }
  });
});
