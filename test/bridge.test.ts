import { startBridge, type Bridge } from '@ag2net/bridge';
import { HubClient, silentLogger, type AgentClient } from '@ag2net/client';
import { EV_TEXT, EnvelopeSchema, newId, type Envelope } from '@ag2net/protocol';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { call, openSse, type SseEvent, type SseStream } from './support/bridge-http.js';
import { startSecuredStack, type SecuredStack } from './support/secured-stack.js';
import { stackBridgeOptions } from './support/stack-bridge.js';

const KEYS = { alice: 'k-alice', bob: 'k-bob', echo: 'k-echo', dave: 'k-dave' } as const;
const PEOPLE = { alice: KEYS.alice, bob: KEYS.bob };
const OPERATOR_KEY = 'k-operator';

const SessionReply = z.object({ token: z.string(), name: z.string(), operator: z.boolean() });
const ErrorReply = z.object({ error: z.object({ code: z.string(), message: z.string() }) });
const ChannelReply = z.object({ channel: z.object({ channel_id: z.string(), state: z.string() }) });
const LogReply = z.object({ envelopes: z.array(EnvelopeSchema), last_sequence: z.number() });

let stack: SecuredStack;
let a: Bridge;
let b: Bridge;
let sdk: HubClient;
let admin: HubClient;
let echo: AgentClient;
let dave: AgentClient;
let token: { alice: string; bob: string; operator: string };
let channelId: string;
const secret = randomBytes(32);
/** The echo agent's private reply (audience dave only) in the discussion. */
let privateId: string;

async function signIn(bridge: Bridge, name: string, key: string): Promise<string> {
  const reply = await call(bridge.url, '/v1/session', { body: { name, api_key: key } });
  expect(reply.status).toBe(200);
  return SessionReply.parse(reply.body).token;
}

function codeOf(body: unknown): string {
  return ErrorReply.parse(body).error.code;
}

function envelopesOf(events: readonly SseEvent[]): Envelope[] {
  return events.filter((e) => e.event === 'envelope').map((e) => EnvelopeSchema.parse(e.data));
}

beforeAll(async () => {
  stack = await startSecuredStack({ apiKeys: KEYS });
  const bridgeOptions = stackBridgeOptions(stack, { apiKeys: PEOPLE, secret, operatorKey: OPERATOR_KEY });
  // Two replicas with the same secret: one person, the same identity and key on both.
  a = await startBridge(bridgeOptions);
  b = await startBridge(bridgeOptions);
  sdk = await HubClient.connect({ servers: stack.url, prefix: stack.prefix, creds: stack.registrantCreds });
  admin = await HubClient.connect({
    servers: stack.url,
    prefix: stack.prefix,
    creds: stack.adminCreds,
    operator: true,
  });
  dave = await sdk.register({ name: 'dave', auth: { scheme: 'api_key', claim: { token: KEYS.dave } } });
  echo = await sdk.register(
    { name: 'echo', auth: { scheme: 'api_key', claim: { token: KEYS.echo } } },
    {
      skillMd: '# echo\nAnswers privately.',
      handler: async (envelope, client) => {
        if (envelope.event_type === 'ag2.channel.invite') {
          const { ackInvite } = await import('@ag2net/client');
          await ackInvite(client, envelope);
          return;
        }
        if (envelope.event_type !== EV_TEXT || envelope.sender_id === client.agentId) return;
        const text = String(envelope.event_data['text']);
        // Private to dave: alice, in the channel, must never learn it.
        if (text === 'hello all')
          await client.send(envelope.channel_id, 'a secret for dave', { audience: [dave.agentId] });
        else await client.send(envelope.channel_id, `echo: ${text}`);
      },
    },
  );
  token = {
    alice: await signIn(a, 'alice', KEYS.alice),
    bob: await signIn(b, 'bob', KEYS.bob),
    operator: await signIn(a, '$operator', OPERATOR_KEY),
  };
}, 60_000);

afterAll(async () => {
  await a?.close();
  await b?.close();
  await sdk?.close();
  await admin?.close();
  await stack?.stop();
});

describe('bridge sign-in and refusals', () => {
  it('refuses a wrong key, an unknown name, a wrong operator key, no token and a forged token', async () => {
    const wrong = await call(a.url, '/v1/session', { body: { name: 'alice', api_key: 'nope' } });
    expect([wrong.status, codeOf(wrong.body)]).toEqual([401, 'auth_failed']);
    const unknown = await call(a.url, '/v1/session', { body: { name: 'mallory', api_key: 'k' } });
    expect([unknown.status, ErrorReply.parse(unknown.body).error.message]).toEqual([
      401,
      "admission refused for 'mallory'",
    ]);
    const op = await call(a.url, '/v1/session', { body: { name: '$operator', api_key: 'nope' } });
    expect(op.status).toBe(401);
    const none = await call(a.url, '/v1/agents');
    expect([none.status, codeOf(none.body)]).toEqual([401, 'auth_failed']);
    const forged = await call(a.url, '/v1/channels', { token: `${token.alice.split('.')[0] ?? ''}.AAAA` });
    expect(forged.status).toBe(401);
    const badBody = await call(a.url, '/v1/session', { body: { name: 'alice' } });
    expect([badBody.status, codeOf(badBody.body)]).toEqual([400, 'invalid_request']);
    const notJson = await call(a.url, '/v1/session', { body: '{', headers: { 'content-type': 'application/json' } });
    expect(notJson.status).toBe(400);
    const big = await call(a.url, '/v1/session', { body: { name: 'alice', api_key: 'x'.repeat(300_000) } });
    expect(big.status).toBe(413);
    const route = await call(a.url, '/v1/nowhere', { token: token.alice });
    expect([route.status, codeOf(route.body)]).toEqual([404, 'not_found']);
  });

  it('acts as the person: /v1/me names the identity the hub registered for them, the same on both replicas', async () => {
    const onA = await call(a.url, '/v1/me', { token: token.alice });
    const onB = await call(b.url, '/v1/me', { token: token.alice });
    const me = z.object({ name: z.string(), operator: z.boolean(), agent_id: z.string() }).parse(onA.body);
    expect(me.name).toBe('alice');
    expect(onB.body).toEqual(onA.body);
    const passport = await admin.getAgent('alice');
    expect([passport.agent_id, passport.kind]).toEqual([me.agent_id, 'human']);
    // The hub never returns the API key it admitted the person with.
    expect(JSON.stringify(passport)).not.toContain(KEYS.alice);
  });
});

describe('bridge agents and hub', () => {
  it('lists agents and serves a passport, resume and skill', async () => {
    const list = await call(a.url, '/v1/agents?limit=50', { token: token.bob });
    const names = z
      .object({ agents: z.array(z.object({ name: z.string() })) })
      .parse(list.body)
      .agents.map((p) => p.name)
      .sort();
    expect(names).toEqual(['alice', 'bob', 'dave', 'echo']);
    const passport = await call(a.url, '/v1/agents/echo', { token: token.bob });
    expect(z.object({ passport: z.object({ agent_id: z.string() }) }).parse(passport.body).passport.agent_id).toBe(
      echo.agentId,
    );
    const resume = await call(a.url, `/v1/agents/${echo.agentId}/resume`, { token: token.bob });
    expect(resume.status).toBe(200);
    const skill = await call(a.url, `/v1/agents/${echo.agentId}/skill`, { token: token.bob });
    expect(skill.body).toEqual({ skill_md: '# echo\nAnswers privately.' });
    const missing = await call(a.url, '/v1/agents/nobody', { token: token.bob });
    expect([missing.status, codeOf(missing.body)]).toEqual([404, 'not_found']);
  });

  it('reports the hub health and lease', async () => {
    const reply = await call(a.url, '/v1/hub/health', { token: token.alice });
    const health = z
      .object({ health: z.object({ role: z.string(), hub_id: z.string(), epoch: z.number() }), lease: z.unknown() })
      .parse(reply.body);
    expect(health.health.role).toBe('active');
    expect(health.lease).toEqual({ holder: health.health.hub_id, epoch: health.health.epoch });
  });
});

describe('bridge channels as a person', () => {
  it('opens a discussion, posts in turn, and reads it back; a non-participant is refused everywhere', async () => {
    const opened = await call(a.url, '/v1/channels', {
      token: token.alice,
      body: { type: 'discussion', target: ['echo', 'dave'] },
    });
    expect(opened.status).toBe(201);
    channelId = ChannelReply.parse(opened.body).channel.channel_id;
    const posted = await call(b.url, `/v1/channels/${channelId}/envelopes`, {
      token: token.alice,
      body: { text: 'hello all' },
    });
    expect(posted.status).toBe(201);
    // echo answers privately to dave; wait for it through dave's own SDK view.
    const secret = await dave.nextEnvelope({
      predicate: (e) => e.channel_id === channelId && e.sender_id === echo.agentId && e.event_type === EV_TEXT,
      timeout: 10_000,
    });
    privateId = secret?.envelope_id ?? '';
    expect(secret?.audience).toEqual([dave.agentId]);

    const listed = await call(a.url, '/v1/channels?type=discussion', { token: token.alice });
    expect(z.object({ channels: z.array(z.object({ channel_id: z.string() })) }).parse(listed.body).channels).toEqual([
      expect.objectContaining({ channel_id: channelId }),
    ]);
    const state = await call(a.url, `/v1/channels/${channelId}/state`, { token: token.alice });
    expect(state.status).toBe(200);
    // Bob is in no channel of alice's: to him it is not there.
    for (const path of ['', '/state', '/log', '/stream']) {
      const refused = await call(a.url, `/v1/channels/${channelId}${path}`, { token: token.bob });
      expect([path, refused.status, codeOf(refused.body)]).toEqual([path, 404, 'not_found']);
    }
    const bobPost = await call(a.url, `/v1/channels/${channelId}/envelopes`, { token: token.bob, body: { text: 'x' } });
    // A post is refused as AG2 refuses a non-participant's send.
    expect([bobPost.status, codeOf(bobPost.body)]).toEqual([422, 'protocol_error']);
    const bobList = await call(a.url, '/v1/channels', { token: token.bob });
    expect(bobList.body).toEqual({ channels: [], next_cursor: null });
  });

  it("never shows the person another's private envelope: log, channel stream, deliveries stream", async () => {
    // No read of alice's shows what the private envelope carried.
    for (const path of [`/v1/channels/${channelId}`, `/v1/channels/${channelId}/state`, '/v1/channels', '/v1/tasks']) {
      const reply = await call(a.url, path, { token: token.alice });
      expect([path, reply.status, JSON.stringify(reply.body).includes('a secret for dave')]).toEqual([
        path,
        200,
        false,
      ]);
    }
    const log = LogReply.parse((await call(a.url, `/v1/channels/${channelId}/log`, { token: token.alice })).body);
    const ids = log.envelopes.map((e) => e.envelope_id);
    expect(ids).not.toContain(privateId);
    expect(log.envelopes.some((e) => e.event_data['text'] === 'hello all')).toBe(true);
    // The operator reads the whole log, the private reply included.
    const full = LogReply.parse((await call(a.url, `/v1/channels/${channelId}/log`, { token: token.operator })).body);
    expect(full.envelopes.map((e) => e.envelope_id)).toContain(privateId);
    expect(full.last_sequence).toBe(log.last_sequence);

    const stream = await openSse(`${b.url}/v1/channels/${channelId}/stream`, {
      authorization: `Bearer ${token.alice}`,
    });
    const seen: SseEvent[] = [];
    for (let i = 0; i < log.envelopes.length; i++) seen.push(await stream.next());
    stream.close();
    expect(envelopesOf(seen).map((e) => e.envelope_id)).toEqual(ids);

    const me = z.object({ agent_id: z.string() }).parse((await call(a.url, '/v1/me', { token: token.alice })).body);
    const deliveries = await openSse(`${a.url}/v1/me/stream?from=start`, { authorization: `Bearer ${token.alice}` });
    const delivered: SseEvent[] = [];
    // Deliveries are what others sent that alice may see.
    const expected = log.envelopes.filter((e) => e.sender_id !== me.agent_id);
    for (let i = 0; i < expected.length; i++) delivered.push(await deliveries.next());
    deliveries.close();
    expect(envelopesOf(delivered).map((e) => e.envelope_id)).toEqual(expected.map((e) => e.envelope_id));
    expect(envelopesOf(delivered).map((e) => e.envelope_id)).not.toContain(privateId);
  });
});

/** Reads events until one carries an envelope with `text`; returns them all. */
async function readUntil(stream: SseStream, text: string): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for (;;) {
    const event = await stream.next();
    out.push(event);
    if (event.event === 'envelope' && EnvelopeSchema.parse(event.data).event_data['text'] === text) return out;
  }
}

async function waitForText(bridge: Bridge, channel: string, text: string): Promise<void> {
  const stream = await openSse(`${bridge.url}/v1/channels/${channel}/stream`, {
    authorization: `Bearer ${token.alice}`,
  });
  try {
    await readUntil(stream, text);
  } finally {
    stream.close();
  }
}

describe('bridge streams resume', () => {
  it('a channel stream resumed on the other replica with Last-Event-ID has no gap and no duplicate', async () => {
    const opened = await call(a.url, '/v1/channels', {
      token: token.alice,
      body: { type: 'conversation', target: 'echo' },
    });
    const id = ChannelReply.parse(opened.body).channel.channel_id;
    const first = await openSse(`${b.url}/v1/channels/${id}/stream`, { authorization: `Bearer ${token.alice}` });
    expect(
      (await call(a.url, `/v1/channels/${id}/envelopes`, { token: token.alice, body: { text: 'one' } })).status,
    ).toBe(201);
    const before = await readUntil(first, 'echo: one');
    first.close();
    const lastId = before.at(-1)?.id ?? '';
    // While nobody listens: two more turns.
    expect(
      (await call(b.url, `/v1/channels/${id}/envelopes`, { token: token.alice, body: { text: 'two' } })).status,
    ).toBe(201);
    await waitForText(a, id, 'echo: two');
    const resumed = await openSse(`${a.url}/v1/channels/${id}/stream`, {
      authorization: `Bearer ${token.alice}`,
      'last-event-id': lastId,
    });
    const after = await readUntil(resumed, 'echo: two');
    resumed.close();
    const log = LogReply.parse((await call(a.url, `/v1/channels/${id}/log`, { token: token.alice })).body);
    const streamed = envelopesOf([...before, ...after]);
    expect(streamed.map((e) => e.sequence)).toEqual(log.envelopes.map((e) => e.sequence));
    expect(streamed.map((e) => e.envelope_id)).toEqual(log.envelopes.map((e) => e.envelope_id));
    expect([...before, ...after].map((e) => e.id)).toEqual(log.envelopes.map((e) => String(e.sequence)));

    // The deliveries stream resumes the same way, across replicas, from its cursor.
    const me = z.object({ agent_id: z.string() }).parse((await call(a.url, '/v1/me', { token: token.alice })).body);
    const d1 = await openSse(`${a.url}/v1/me/stream?from=start`, { authorization: `Bearer ${token.alice}` });
    const part1 = await readUntil(d1, 'echo: one');
    d1.close();
    const d2 = await openSse(`${b.url}/v1/me/stream`, {
      authorization: `Bearer ${token.alice}`,
      'last-event-id': part1.at(-1)?.id ?? '',
    });
    const part2 = await readUntil(d2, 'echo: two');
    d2.close();
    const mine = envelopesOf([...part1, ...part2]).filter((e) => e.channel_id === id);
    expect(mine.map((e) => e.envelope_id)).toEqual(
      log.envelopes.filter((e) => e.sender_id !== me.agent_id).map((e) => e.envelope_id),
    );
    const all = envelopesOf([...part1, ...part2]).map((e) => e.envelope_id);
    expect(new Set(all).size).toBe(all.length);
    expect(all).not.toContain(privateId);

    const closed = await call(b.url, `/v1/channels/${id}/close`, { token: token.alice, body: { reason: 'done' } });
    expect(ChannelReply.parse(closed.body).channel.state).toBe('closed');
  });
});

describe('bridge operator and tasks', () => {
  it('the operator reads every channel and the audit trail; people are refused the audit, the operator every write', async () => {
    const audit = await call(a.url, `/v1/audit?channel_id=${channelId}`, { token: token.operator });
    expect(audit.status).toBe(200);
    const records = z.object({ records: z.array(z.object({ kind: z.string(), channel_id: z.string().optional() })) });
    const kinds = records.parse(audit.body).records.map((r) => r.kind);
    expect(kinds).toContain('channel_created');
    const refused = await call(a.url, '/v1/audit', { token: token.alice });
    expect([refused.status, codeOf(refused.body)]).toEqual([403, 'access_denied']);
    const post = await call(a.url, `/v1/channels/${channelId}/envelopes`, {
      token: token.operator,
      body: { text: 'x' },
    });
    expect([post.status, codeOf(post.body)]).toEqual([403, 'access_denied']);
    const all = await call(a.url, '/v1/channels?limit=100', { token: token.operator });
    const ids = z.object({ channels: z.array(z.object({ channel_id: z.string() })) }).parse(all.body).channels;
    expect(ids.map((c) => c.channel_id)).toContain(channelId);
    const meta = await call(b.url, `/v1/channels/${channelId}`, { token: token.operator });
    expect(ChannelReply.parse(meta.body).channel.channel_id).toBe(channelId);
  });

  it("lists and gets a task of the person's channel; a non-participant sees none", async () => {
    const taskId = newId();
    await echo.hub.call('observeTask', {
      task: { task_id: taskId, owner_id: echo.agentId, created_at: new Date().toISOString(), channel_id: channelId },
    });
    const list = await call(a.url, `/v1/tasks?channel_id=${channelId}`, { token: token.alice });
    const tasks = z.object({ tasks: z.array(z.object({ task_id: z.string() })) }).parse(list.body).tasks;
    expect(tasks.map((t) => t.task_id)).toEqual([taskId]);
    const one = await call(b.url, `/v1/tasks/${taskId}`, { token: token.alice });
    expect(z.object({ task: z.object({ task_id: z.string() }) }).parse(one.body).task.task_id).toBe(taskId);
    const bobs = await call(a.url, `/v1/tasks?channel_id=${channelId}`, { token: token.bob });
    expect(bobs.body).toEqual({ tasks: [], next_cursor: null });
    const bobOne = await call(a.url, `/v1/tasks/${taskId}`, { token: token.bob });
    expect([bobOne.status, codeOf(bobOne.body)]).toEqual([404, 'not_found']);
  });
});

describe('bridge anonymous reads, rate limit and OpenAPI', () => {
  it('with --anonymous-read, public reads need no token but channels do; past the burst, 429', async () => {
    await using open = await startBridge({
      servers: stack.url,
      prefix: stack.prefix,
      registrantCreds: stack.registrantCreds,
      operatorCreds: stack.operatorCallerCreds,
      apiKeys: PEOPLE,
      secret: randomBytes(32),
      anonymousRead: true,
      rateBurst: 3,
      ratePerMinute: 1,
      port: 0,
    });
    const agents = await call(open.url, '/v1/agents');
    expect(agents.status).toBe(200);
    const channels = await call(open.url, '/v1/channels');
    expect([channels.status, codeOf(channels.body)]).toEqual([401, 'auth_failed']);
    await call(open.url, '/v1/hub/health');
    const limited = await call(open.url, '/v1/agents');
    expect([limited.status, codeOf(limited.body)]).toEqual([429, 'rate_limited']);
    // A made-up token buys no fresh bucket: guessing keys stays limited by address.
    const guess = await call(open.url, '/v1/session', { token: 'made.up', body: { name: 'alice', api_key: 'guess' } });
    expect([guess.status, codeOf(guess.body)]).toEqual([429, 'rate_limited']);
  });

  it('publishes an OpenAPI 3.1 document whose every operation is served', async () => {
    const doc = z
      .object({ openapi: z.string(), paths: z.record(z.string(), z.record(z.string(), z.unknown())) })
      .parse((await call(a.url, '/v1/openapi.json')).body);
    expect(doc.openapi).toBe('3.1.0');
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual(
      [
        'POST /v1/session',
        'GET /v1/me',
        'GET /v1/me/stream',
        'GET /v1/agents',
        'GET /v1/agents/{name_or_id}',
        'GET /v1/agents/{agent_id}/resume',
        'GET /v1/agents/{agent_id}/skill',
        'GET /v1/activity',
        'GET /v1/channels',
        'POST /v1/channels',
        'GET /v1/channels/{channel_id}',
        'GET /v1/channels/{channel_id}/state',
        'POST /v1/channels/{channel_id}/close',
        'GET /v1/channels/{channel_id}/log',
        'GET /v1/channels/{channel_id}/stream',
        'POST /v1/channels/{channel_id}/envelopes',
        'GET /v1/tasks',
        'GET /v1/tasks/{task_id}',
        'GET /v1/audit',
        'GET /v1/hub/health',
        'GET /v1/hub/status',
        'GET /a2a/agents',
        'GET /a2a/agents/{name}/.well-known/agent-card.json',
        'POST /a2a/agents/{name}',
        'POST /mcp',
      ].sort(),
    );
    // Each documented operation is routed: with a bad body or an unknown id it is refused by its handler, never
    // answered "no route".
    for (const operation of operations) {
      const [method = '', template = ''] = operation.split(' ');
      if (template.endsWith('/stream')) continue;
      const path = template.replace(/\{[a-z_]+\}/g, newId());
      const reply = await call(a.url, path, {
        method,
        token: token.operator,
        ...(method === 'POST' ? { body: {} } : {}),
      });
      expect(ErrorReply.safeParse(reply.body).data?.error.message ?? '').not.toMatch(/^no route/);
    }
  });
});

describe('bridge people', () => {
  it('a person invited by another accepts through the API; both see the channel active', async () => {
    const bob = z.object({ agent_id: z.string() }).parse((await call(b.url, '/v1/me', { token: token.bob })).body);
    const invites = await openSse(`${b.url}/v1/me/stream`, { authorization: `Bearer ${token.bob}` });
    // alice's open answers once bob acked, so it runs while bob reads his deliveries.
    const opening = call(a.url, '/v1/channels', { token: token.alice, body: { type: 'conversation', target: 'bob' } });
    let invite: Envelope | undefined;
    while (invite === undefined) {
      const [first] = envelopesOf([await invites.next()]);
      if (first?.event_type === 'ag2.channel.invite') invite = first;
    }
    invites.close();
    expect(invite.audience).toEqual([bob.agent_id]);
    const ack = await call(b.url, `/v1/channels/${invite.channel_id}/envelopes`, {
      token: token.bob,
      body: {
        event_type: 'ag2.channel.invite.ack',
        event_data: { channel_id: invite.channel_id },
        causation_id: invite.envelope_id,
      },
    });
    expect(ack.status).toBe(201);
    const opened = await opening;
    expect(opened.status).toBe(201);
    expect(ChannelReply.parse(opened.body).channel).toMatchObject({ channel_id: invite.channel_id, state: 'active' });
  });

  it('a bridge with another secret derives another key: the hub refuses to attach the person with it', async () => {
    await using other = await startBridge({
      servers: stack.url,
      prefix: stack.prefix,
      registrantCreds: stack.registrantCreds,
      apiKeys: PEOPLE,
      secret: randomBytes(32),
      port: 0,
    });
    const refused = await call(other.url, '/v1/session', { body: { name: 'alice', api_key: KEYS.alice } });
    expect([refused.status, codeOf(refused.body)]).toEqual([401, 'auth_failed']);
  });

  it('closes an idle person connection and attaches the person again with the same key on the next request', async () => {
    const lines: string[] = [];
    const record = (_: object, msg?: string): void => void lines.push(msg ?? '');
    await using idle = await startBridge({
      servers: stack.url,
      prefix: stack.prefix,
      registrantCreds: stack.registrantCreds,
      apiKeys: PEOPLE,
      secret,
      idleMs: 1000,
      port: 0,
      logger: { ...silentLogger, debug: record, info: record, warn: record, error: record },
    });
    // A token of replica a works here: the same secret.
    const first = await call(idle.url, '/v1/me', { token: token.alice });
    expect(first.status).toBe(200);
    await vi.waitFor(() => expect(lines).toContain('idle person connection closed'), { timeout: 10_000 });
    const again = await call(idle.url, '/v1/me', { token: token.alice });
    expect(again.body).toEqual(first.body);
    expect(lines.filter((l) => l === 'person attached')).toHaveLength(2);
  });
});
