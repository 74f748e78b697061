import { roundRobin } from '@ag2net/adapters';
import { startBridge, type Bridge } from '@ag2net/bridge';
import { HubClient, ackInvite, type AgentClient } from '@ag2net/client';
import { EV_CONTEXT_SET, EV_TEXT, EnvelopeSchema, newId, type Envelope } from '@ag2net/protocol';
import { randomBytes } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { a2aRoutes } from '../bridge/src/a2a/gateway.js';
import { mcpRoute } from '../bridge/src/mcp-route.js';
import { bridgeRoutes } from '../bridge/src/routes.js';
import { SessionTokens } from '../bridge/src/session-tokens.js';
import { call, callOnce, openSse, type SseEvent } from './support/bridge-http.js';
import { startSecuredStack, type SecuredStack } from './support/secured-stack.js';
import { stackBridgeOptions } from './support/stack-bridge.js';

/**
 * The bridge's API against a secured stack, route by route: the filters and pages of every read, the writes, the
 * refusals of each route class, privacy across every endpoint and stream, and the bounds on bad input.
 */

const KEYS = { alice: 'k-alice', bob: 'k-bob', echo: 'k-echo', dave: 'k-dave', carol: 'k-carol' } as const;
const PEOPLE = { alice: KEYS.alice, bob: KEYS.bob };
const OPERATOR_KEY = 'k-operator';

const ErrorReply = z.object({ error: z.object({ code: z.string(), message: z.string() }) });
const Channel = z.object({
  channel_id: z.string(),
  state: z.string(),
  manifest: z.object({ type: z.string() }),
  participants: z.array(z.object({ agent_id: z.string() })),
});
const ChannelReply = z.object({ channel: Channel });
const ChannelsPage = z.object({ channels: z.array(Channel), next_cursor: z.string().nullable() });
const LogPage = z.object({
  envelopes: z.array(EnvelopeSchema),
  last_sequence: z.number(),
  next_since: z.number().nullable(),
});
const AgentsPage = z.object({ agents: z.array(z.object({ name: z.string() })), next_cursor: z.string().nullable() });
const PostReply = z.object({ envelope_id: z.string(), sequence: z.number() });
const TasksPage = z.object({ tasks: z.array(z.object({ task_id: z.string() })), next_cursor: z.string().nullable() });
const AuditPage = z.object({
  records: z.array(z.looseObject({ id: z.string(), kind: z.string(), at: z.string() })),
  next_cursor: z.string().nullable(),
});
const StateReply = z.object({ state: z.object({ context_vars: z.record(z.string(), z.unknown()) }) });

let stack: SecuredStack;
let a: Bridge;
let b: Bridge;
let sdk: HubClient;
let echo: AgentClient;
let dave: AgentClient;
let carol: AgentClient;
let token: { alice: string; bob: string; operator: string };
let id: { alice: string; bob: string };
const secret = randomBytes(32);

/** Channels made along the way, shared by the tests below in order. */
const made = { conversation: '', discussion: '', workflow: '', chat: '' };

async function signIn(bridge: Bridge, name: string, key: string): Promise<string> {
  const reply = await call(bridge.url, '/v1/session', { body: { name, api_key: key } });
  return z.object({ token: z.string() }).parse(reply.body).token;
}

function refusal(reply: { status: number; body: unknown }): [number, string] {
  return [reply.status, ErrorReply.parse(reply.body).error.code];
}

function envelopesOf(events: readonly SseEvent[]): Envelope[] {
  return events.filter((e) => e.event === 'envelope').map((e) => EnvelopeSchema.parse(e.data));
}

async function logOf(channel: string, as: string, query = ''): Promise<z.infer<typeof LogPage>> {
  const reply = await call(a.url, `/v1/channels/${channel}/log${query}`, { token: as });
  expect(reply.status).toBe(200);
  return LogPage.parse(reply.body);
}

/** Waits until the channel's log (as alice reads it) holds a text envelope saying `text`. */
async function untilText(channel: string, text: string): Promise<void> {
  const stream = await openSse(`${a.url}/v1/channels/${channel}/stream`, { authorization: `Bearer ${token.alice}` });
  try {
    for (;;) {
      const [e] = envelopesOf([await stream.next()]);
      if (e?.event_data['text'] === text) return;
    }
  } finally {
    stream.close();
  }
}

async function post(channel: string, as: string, body: Record<string, unknown>): Promise<string> {
  const reply = await call(a.url, `/v1/channels/${channel}/envelopes`, { token: as, body });
  expect(reply.status).toBe(201);
  return PostReply.parse(reply.body).envelope_id;
}

/** Every channel the caller lists with `query`, following `next_cursor` page by page. */
async function allChannels(as: string, query: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page = ChannelsPage.parse(
      (await call(a.url, `/v1/channels?${query}${cursor === null ? '' : `&cursor=${cursor}`}`, { token: as })).body,
    );
    ids.push(...page.channels.map((c) => c.channel_id));
    cursor = page.next_cursor;
  } while (cursor !== null);
  return ids;
}

beforeAll(async () => {
  stack = await startSecuredStack({ apiKeys: KEYS });
  const options = stackBridgeOptions(stack, {
    apiKeys: PEOPLE,
    secret,
    operatorKey: OPERATOR_KEY,
    // This file's many refusals come from one address: the limit itself is tested on a bridge of its own.
    rateBurst: 100_000,
  });
  a = await startBridge(options);
  b = await startBridge(options);
  sdk = await HubClient.connect({ servers: stack.url, prefix: stack.prefix, creds: stack.registrantCreds });
  dave = await sdk.register({ name: 'dave', auth: { scheme: 'api_key', claim: { token: KEYS.dave } } });
  carol = await sdk.register(
    { name: 'carol', auth: { scheme: 'api_key', claim: { token: KEYS.carol } } },
    { resume: { claimed_capabilities: ['summarize'], summary: 'Summarizes long threads' } },
  );
  echo = await sdk.register(
    { name: 'echo', auth: { scheme: 'api_key', claim: { token: KEYS.echo } } },
    {
      skillMd: '# echo\nSays it back.',
      resume: { claimed_capabilities: ['translate', 'summarize'], summary: 'Echoes every text back' },
      handler: async (envelope, client) => {
        if (envelope.event_type === 'ag2.channel.invite') return ackInvite(client, envelope);
        if (envelope.event_type !== EV_TEXT || envelope.sender_id === client.agentId) return;
        await client.send(envelope.channel_id, `echo: ${String(envelope.event_data['text'])}`);
      },
    },
  );
  token = {
    alice: await signIn(a, 'alice', KEYS.alice),
    bob: await signIn(b, 'bob', KEYS.bob),
    operator: await signIn(a, '$operator', OPERATOR_KEY),
  };
  const me = z.object({ agent_id: z.string() });
  id = {
    alice: me.parse((await call(a.url, '/v1/me', { token: token.alice })).body).agent_id,
    bob: me.parse((await call(a.url, '/v1/me', { token: token.bob })).body).agent_id,
  };
}, 60_000);

afterAll(async () => {
  await a?.close();
  await b?.close();
  await sdk?.close();
  await stack?.stop();
});

describe('bridge API: agents', () => {
  it('filters the directory by capability, summary text and kind, and pages it with a cursor', async () => {
    const names = async (query: string) =>
      AgentsPage.parse((await call(a.url, `/v1/agents?${query}`, { token: token.bob })).body)
        .agents.map((p) => p.name)
        .sort();
    expect(await names('capability=translate')).toEqual(['echo']);
    expect(await names('capability=summarize')).toEqual(['carol', 'echo']);
    expect(await names('query=LONG%20THREADS')).toEqual(['carol']);
    expect(await names('kind=human')).toEqual(['alice', 'bob']);
    expect(await names('kind=human&capability=translate')).toEqual([]);
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const page = AgentsPage.parse(
        (await call(a.url, `/v1/agents?limit=2${cursor === null ? '' : `&cursor=${cursor}`}`, { token: token.bob }))
          .body,
      );
      pages.push(page.agents.map((p) => p.name));
      cursor = page.next_cursor;
    } while (cursor !== null);
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(pages.flat().sort()).toEqual(['alice', 'bob', 'carol', 'dave', 'echo']);
    expect(refusal(await call(a.url, '/v1/agents?kind=robot', { token: token.bob }))).toEqual([400, 'invalid_request']);
    expect(refusal(await call(a.url, '/v1/agents?limit=0', { token: token.bob }))).toEqual([400, 'invalid_request']);
  });

  it('serves a passport by name and by id alike, the resume, the skill and a null skill', async () => {
    const byName = await call(a.url, '/v1/agents/echo', { token: token.alice });
    const byId = await call(b.url, `/v1/agents/${echo.agentId}`, { token: token.alice });
    expect(byName.status).toBe(200);
    expect(byId.body).toEqual(byName.body);
    expect(z.object({ passport: z.object({ agent_id: z.string() }) }).parse(byName.body).passport.agent_id).toBe(
      echo.agentId,
    );
    const resume = z
      .object({ resume: z.object({ claimed_capabilities: z.array(z.string()), summary: z.string() }) })
      .parse((await call(a.url, `/v1/agents/${echo.agentId}/resume`, { token: token.alice })).body).resume;
    expect([resume.claimed_capabilities, resume.summary]).toEqual([
      ['translate', 'summarize'],
      'Echoes every text back',
    ]);
    expect((await call(a.url, `/v1/agents/${echo.agentId}/skill`, { token: token.alice })).body).toEqual({
      skill_md: '# echo\nSays it back.',
    });
    expect((await call(a.url, `/v1/agents/${carol.agentId}/skill`, { token: token.alice })).body).toEqual({
      skill_md: null,
    });
    expect(refusal(await call(a.url, `/v1/agents/${'x'.repeat(129)}/resume`, { token: token.alice }))).toEqual([
      400,
      'invalid_request',
    ]);
    expect(refusal(await call(a.url, `/v1/agents/${newId()}/resume`, { token: token.alice }))).toEqual([
      404,
      'not_found',
    ]);
  });

  it('reports the hub health with the active hub as the lease holder', async () => {
    const reply = z
      .object({
        health: z.object({ role: z.string(), hub_id: z.string(), epoch: z.number() }),
        lease: z.object({ holder: z.string(), epoch: z.number() }).nullable(),
      })
      .parse((await call(b.url, '/v1/hub/health', { token: token.operator })).body);
    expect(reply.health.role).toBe('active');
    expect(reply.lease).toEqual({ holder: reply.health.hub_id, epoch: reply.health.epoch });
  });
});

/** alice opens `body` with bob among the invitees: bob acks his invite through the API, as a person does. */
async function openWithBob(body: Record<string, unknown>): Promise<string> {
  const invites = await openSse(`${b.url}/v1/me/stream`, { authorization: `Bearer ${token.bob}` });
  const opening = call(a.url, '/v1/channels', { token: token.alice, body });
  let invite: Envelope | undefined;
  try {
    while (invite === undefined) {
      const [next] = envelopesOf([await invites.next()]);
      if (next?.event_type === 'ag2.channel.invite') invite = next;
    }
  } finally {
    invites.close();
  }
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
  const channel = ChannelReply.parse(opened.body).channel;
  expect([channel.channel_id, channel.state]).toEqual([invite.channel_id, 'active']);
  return channel.channel_id;
}

describe('bridge API: channels', () => {
  it('opens channels, closes one (again: the same answer), and filters the list by state, type and participant', async () => {
    const open = async (body: Record<string, unknown>) => {
      const reply = await call(a.url, '/v1/channels', { token: token.alice, body });
      expect(reply.status).toBe(201);
      return ChannelReply.parse(reply.body).channel.channel_id;
    };
    made.conversation = await open({ type: 'conversation', target: 'echo' });
    made.discussion = await open({ type: 'discussion', target: ['echo', 'dave'] });
    made.workflow = await openWithBob({
      type: 'workflow',
      target: ['bob', 'dave'],
      knobs: { graph: roundRobin(['alice', 'bob', 'dave']).toDict(), context_vars: { topic: 'pricing' } },
    });
    const meta = ChannelReply.parse((await call(b.url, `/v1/channels/${made.workflow}`, { token: token.bob })).body);
    expect(meta.channel.participants.map((p) => p.agent_id)).toEqual([id.alice, id.bob, dave.agentId]);
    expect(meta.channel.manifest.type).toBe('workflow');

    const closed = await call(a.url, `/v1/channels/${made.conversation}/close`, {
      token: token.alice,
      body: { reason: 'done' },
    });
    expect([closed.status, ChannelReply.parse(closed.body).channel.state]).toEqual([200, 'closed']);
    // Closing a closed channel is no error: the hub answers its metadata as it is.
    const again = await call(b.url, `/v1/channels/${made.conversation}/close`, { token: token.alice, body: {} });
    expect(again.body).toEqual(closed.body);
    expect(refusal(await call(a.url, `/v1/channels/${made.discussion}/close`, { token: token.bob, body: {} }))).toEqual(
      [403, 'access_denied'],
    );

    const everything = [made.conversation, made.discussion, made.workflow].sort();
    expect((await allChannels(token.alice, 'limit=100')).sort()).toEqual(everything);
    expect(await allChannels(token.alice, 'state=closed')).toEqual([made.conversation]);
    expect((await allChannels(token.alice, 'state=active')).sort()).toEqual([made.discussion, made.workflow].sort());
    expect(await allChannels(token.alice, 'type=workflow')).toEqual([made.workflow]);
    expect(await allChannels(token.alice, `agent_id=${id.bob}`)).toEqual([made.workflow]);
    expect((await allChannels(token.alice, `agent_id=${dave.agentId}`)).sort()).toEqual(
      [made.discussion, made.workflow].sort(),
    );
    expect(await allChannels(token.bob, 'limit=100')).toEqual([made.workflow]);
    // Page by page, one a page: the same channels, each once.
    const paged = await allChannels(token.alice, 'limit=1');
    expect(paged.sort()).toEqual(everything);
    expect(refusal(await call(a.url, '/v1/channels?state=sleepy', { token: token.alice }))).toEqual([
      400,
      'invalid_request',
    ]);
  });

  it('pages the log by since, until and limit with next_since', async () => {
    const opened = await call(a.url, '/v1/channels', {
      token: token.alice,
      body: { type: 'conversation', target: 'echo' },
    });
    made.chat = ChannelReply.parse(opened.body).channel.channel_id;
    // A conversation takes turns: each post waits for echo's answer.
    for (const text of ['one', 'two', 'three']) {
      await post(made.chat, token.alice, { text });
      await untilText(made.chat, `echo: ${text}`);
    }
    const full = await logOf(made.chat, token.alice);
    const seqs = full.envelopes.map((e) => e.sequence ?? 0);
    expect(seqs.length).toBeGreaterThanOrEqual(8);
    expect(full.next_since).toBeNull();
    expect(full.last_sequence).toBe(seqs.at(-1));
    const first = await logOf(made.chat, token.alice, '?limit=3');
    expect(first.envelopes.map((e) => e.sequence)).toEqual(seqs.slice(0, 3));
    expect(first.next_since).toBe((seqs[2] ?? 0) + 1);
    const second = await logOf(made.chat, token.alice, `?since=${first.next_since ?? 0}&limit=3`);
    expect(second.envelopes.map((e) => e.sequence)).toEqual(seqs.slice(3, 6));
    const until = await logOf(made.chat, token.alice, `?since=2&until=5`);
    expect(until.envelopes.map((e) => e.sequence)).toEqual(seqs.filter((s) => s >= 2 && s <= 5));
    const past = await logOf(made.chat, token.alice, `?since=${full.last_sequence + 1}`);
    expect([past.envelopes, past.last_sequence, past.next_since]).toEqual([[], full.last_sequence, null]);
    expect(refusal(await call(a.url, `/v1/channels/${made.chat}/log?limit=1001`, { token: token.alice }))).toEqual([
      400,
      'invalid_request',
    ]);
  });

  it('admits a retried post with the same envelope_id once', async () => {
    const envelopeId = newId();
    const body = { envelope_id: envelopeId, text: 'once only' };
    const first = await call(a.url, `/v1/channels/${made.chat}/envelopes`, { token: token.alice, body });
    const retry = await call(b.url, `/v1/channels/${made.chat}/envelopes`, { token: token.alice, body });
    expect(first.status).toBe(201);
    expect(PostReply.parse(retry.body)).toEqual(PostReply.parse(first.body));
    const log = await logOf(made.chat, token.operator);
    expect(log.envelopes.filter((e) => e.envelope_id === envelopeId)).toHaveLength(1);
  });
});

describe('bridge API: privacy of a private envelope across every endpoint and stream', () => {
  it('bob, a participant outside the audience, never receives alice’s envelopes to dave; the operator reads them', async () => {
    const channel = made.workflow;
    // alice's turn (the graph's first speaker): a private context variable and a private text, both to dave only.
    const privateIds = [
      await post(channel, token.alice, {
        event_type: EV_CONTEXT_SET,
        event_data: { set: { secret: 'launch code' }, delete: [] },
        audience: [dave.agentId],
      }),
      await post(channel, token.alice, { text: 'for dave only', audience: [dave.agentId] }),
    ];
    const bobsTurn = await post(channel, token.bob, { text: 'bob speaks' });

    const everything = await logOf(channel, token.operator);
    const everyId = everything.envelopes.map((e) => e.envelope_id);
    expect(everyId).toEqual(expect.arrayContaining([...privateIds, bobsTurn]));
    // What bob may see: envelopes to everyone, to him, or his own (dave's invite was dave's only).
    const bobMaySee = everything.envelopes
      .filter((e) => e.audience === null || e.audience.includes(id.bob) || e.sender_id === id.bob)
      .map((e) => e.envelope_id);
    expect(bobMaySee).not.toEqual(expect.arrayContaining([privateIds[0]]));
    expect(bobMaySee).not.toEqual(expect.arrayContaining([privateIds[1]]));

    const bobsLog = await logOf(channel, token.bob);
    expect(bobsLog.envelopes.map((e) => e.envelope_id)).toEqual(bobMaySee);
    expect(bobsLog.last_sequence).toBe(everything.last_sequence);
    const alicesLog = await logOf(channel, token.alice);
    expect(alicesLog.envelopes.map((e) => e.envelope_id)).toEqual(everyId);

    const stream = await openSse(`${b.url}/v1/channels/${channel}/stream?since=1`, {
      authorization: `Bearer ${token.bob}`,
    });
    const streamed: SseEvent[] = [];
    try {
      while (envelopesOf(streamed).at(-1)?.envelope_id !== bobsTurn) streamed.push(await stream.next());
    } finally {
      stream.close();
    }
    expect(envelopesOf(streamed).map((e) => e.envelope_id)).toEqual(bobMaySee);

    const delivered = await openSse(`${a.url}/v1/me/stream?from=start`, { authorization: `Bearer ${token.bob}` });
    const fromOthers = bobsLog.envelopes.filter((e) => e.sender_id !== id.bob).map((e) => e.envelope_id);
    const deliveries: Envelope[] = [];
    try {
      while (deliveries.length < fromOthers.length) {
        deliveries.push(...envelopesOf([await delivered.next()]).filter((e) => e.channel_id === channel));
      }
    } finally {
      delivered.close();
    }
    expect(deliveries.map((e) => e.envelope_id)).toEqual(fromOthers);

    const stateAs = async (as: string) =>
      StateReply.parse((await call(a.url, `/v1/channels/${channel}/state`, { token: as })).body).state.context_vars;
    expect(await stateAs(token.bob)).toEqual({ topic: 'pricing' });
    expect(await stateAs(token.alice)).toEqual({ topic: 'pricing', secret: 'launch code' });
    expect(await stateAs(token.operator)).toEqual({ topic: 'pricing', secret: 'launch code' });

    // A task of the channel: bob sees it, and nothing of the private envelopes with it.
    const taskId = newId();
    await dave.hub.call('observeTask', {
      task: { task_id: taskId, owner_id: dave.agentId, created_at: new Date().toISOString(), channel_id: channel },
    });
    const bobsTasks = await call(a.url, `/v1/tasks?channel_id=${channel}`, { token: token.bob });
    expect(TasksPage.parse(bobsTasks.body).tasks.map((t) => t.task_id)).toEqual([taskId]);
    for (const reply of [bobsTasks, await call(a.url, `/v1/tasks/${taskId}`, { token: token.bob })]) {
      const text = JSON.stringify(reply.body);
      expect([text.includes('launch code'), text.includes('for dave only')]).toEqual([false, false]);
    }
    const bobsChannel = JSON.stringify((await call(a.url, `/v1/channels/${channel}`, { token: token.bob })).body);
    expect(bobsChannel.includes('launch code')).toBe(false);

    // The operator's stream of the channel carries everything, the private envelopes included.
    const operators = await openSse(`${b.url}/v1/channels/${channel}/stream?since=1`, {
      authorization: `Bearer ${token.operator}`,
    });
    const all: SseEvent[] = [];
    try {
      while (all.length < everyId.length) all.push(await operators.next());
    } finally {
      operators.close();
    }
    expect(envelopesOf(all).map((e) => e.envelope_id)).toEqual(everyId);
  });
});

describe('bridge API: streams resumed by query, as a browser EventSource does across replicas', () => {
  it('resumes both streams with ?access_token and ?last_event_id on the other replica: no gap, no duplicate', async () => {
    const channel = made.chat;
    const log = await logOf(channel, token.alice);
    const half = Math.floor(log.envelopes.length / 2);
    const cut = log.envelopes[half - 1]?.sequence ?? 0;
    const first = await openSse(`${a.url}/v1/channels/${channel}/stream?since=1&access_token=${token.alice}`, {});
    const before: SseEvent[] = [];
    try {
      while (before.length < half) before.push(await first.next());
    } finally {
      first.close();
    }
    expect(before.at(-1)?.id).toBe(String(cut));
    const second = await openSse(
      `${b.url}/v1/channels/${channel}/stream?access_token=${token.alice}&last_event_id=${cut}`,
      {},
    );
    const after: SseEvent[] = [];
    try {
      while (after.length < log.envelopes.length - half) after.push(await second.next());
    } finally {
      second.close();
    }
    expect(envelopesOf([...before, ...after]).map((e) => e.envelope_id)).toEqual(
      log.envelopes.map((e) => e.envelope_id),
    );

    // The deliveries stream: its cursor, carried in the query, resumes on the other replica.
    const fromOthers = log.envelopes.filter((e) => e.sender_id !== id.alice).map((e) => e.envelope_id);
    const d1 = await openSse(`${a.url}/v1/me/stream?from=start&access_token=${token.alice}`, {});
    const part1: SseEvent[] = [];
    try {
      while (!envelopesOf(part1).some((e) => e.envelope_id === fromOthers[0])) part1.push(await d1.next());
    } finally {
      d1.close();
    }
    const cursor = part1.at(-1)?.id ?? '';
    const d2 = await openSse(
      `${b.url}/v1/me/stream?access_token=${token.alice}&last_event_id=${encodeURIComponent(cursor)}`,
      {},
    );
    const part2: SseEvent[] = [];
    try {
      while (!envelopesOf(part2).some((e) => e.envelope_id === fromOthers.at(-1))) part2.push(await d2.next());
    } finally {
      d2.close();
    }
    const resumed = envelopesOf([...part1, ...part2]).filter((e) => e.channel_id === channel);
    expect(resumed.map((e) => e.envelope_id)).toEqual(fromOthers);
  });

  it('refuses a Last-Event-ID that is not a sequence or not a cursor with 400 before the stream starts', async () => {
    const channel = await openSse(`${a.url}/v1/channels/${made.chat}/stream`, {
      authorization: `Bearer ${token.alice}`,
      'last-event-id': '12abc',
    });
    expect([channel.status, channel.error]).toEqual([
      400,
      { error: { code: 'invalid_request', message: 'Last-Event-ID is not a sequence' } },
    ]);
    const deliveries = await openSse(`${a.url}/v1/me/stream`, {
      authorization: `Bearer ${token.alice}`,
      'last-event-id': 'bm90IGEgY3Vyc29y',
    });
    expect([deliveries.status, deliveries.error]).toEqual([
      400,
      { error: { code: 'invalid_request', message: 'Last-Event-ID is not a deliveries cursor' } },
    ]);
  });
});

describe('bridge API: tasks and audit', () => {
  it('lists tasks by channel, owner and state, and gets one', async () => {
    const running = newId();
    await echo.hub.call('observeTask', {
      task: {
        task_id: running,
        owner_id: echo.agentId,
        created_at: new Date().toISOString(),
        channel_id: made.discussion,
        state: 'running',
      },
    });
    const ids = async (query: string, as = token.alice) =>
      TasksPage.parse((await call(a.url, `/v1/tasks?${query}`, { token: as })).body)
        .tasks.map((t) => t.task_id)
        .sort();
    expect(await ids(`channel_id=${made.discussion}`)).toEqual([running]);
    expect(await ids(`agent_id=${echo.agentId}`)).toEqual([running]);
    expect(await ids('state=running')).toEqual([running]);
    expect(await ids(`state=running`, token.bob)).toEqual([]);
    const one = z
      .object({ task: z.object({ task_id: z.string(), state: z.string(), owner_id: z.string() }) })
      .parse((await call(b.url, `/v1/tasks/${running}`, { token: token.alice })).body).task;
    expect(one).toEqual({ task_id: running, state: 'running', owner_id: echo.agentId });
    expect(refusal(await call(a.url, `/v1/tasks/${running}`, { token: token.bob }))).toEqual([404, 'not_found']);
    expect(refusal(await call(a.url, `/v1/tasks/${newId()}`, { token: token.alice }))).toEqual([404, 'not_found']);
  });

  it('reads the audit trail by kinds, channel, agent, time window and pages', async () => {
    const audit = async (query: string) => {
      const reply = await call(a.url, `/v1/audit?${query}`, { token: token.operator });
      expect(reply.status).toBe(200);
      return AuditPage.parse(reply.body);
    };
    const closed = await audit('kinds=channel_closed');
    expect(new Set(closed.records.map((r) => r.kind))).toEqual(new Set(['channel_closed']));
    expect(closed.records.map((r) => r['channel_id'])).toContain(made.conversation);
    const two = await audit('kinds=channel_created,channel_closed');
    expect(new Set(two.records.map((r) => r.kind))).toEqual(new Set(['channel_created', 'channel_closed']));
    const ofChannel = await audit(`channel_id=${made.conversation}`);
    expect(new Set(ofChannel.records.map((r) => r['channel_id']))).toEqual(new Set([made.conversation]));
    expect(ofChannel.records.map((r) => r.kind)).toEqual(expect.arrayContaining(['channel_created', 'channel_closed']));
    const ofAgent = await audit(`agent_id=${echo.agentId}&kinds=agent_registered`);
    expect(ofAgent.records.map((r) => r.kind)).toEqual(['agent_registered']);
    const all = await audit('limit=1000');
    const middle = all.records[Math.floor(all.records.length / 2)];
    const since = encodeURIComponent(middle?.at ?? '');
    const after = await audit(`since=${since}`);
    expect(after.records.every((r) => r.at >= (middle?.at ?? ''))).toBe(true);
    expect(after.records.map((r) => r.id)).toContain(middle?.id);
    const before = await audit(`until=${since}`);
    expect(before.records.every((r) => r.at <= (middle?.at ?? ''))).toBe(true);
    const first = await audit('limit=1');
    expect([first.records.map((r) => r.id), first.next_cursor === null]).toEqual([[all.records[0]?.id], false]);
    const next = await audit(`limit=1&cursor=${first.next_cursor ?? ''}`);
    expect(next.records.map((r) => r.id)).toEqual([all.records[1]?.id]);
    expect(refusal(await call(a.url, '/v1/audit?since=yesterday', { token: token.operator }))).toEqual([
      400,
      'invalid_request',
    ]);
  });
});

/** A path of each route template, its parameters filled with real ids where there are some. */
function samplePath(template: string): string {
  return template
    .replace('{name_or_id}', 'echo')
    .replace('{agent_id}', echo.agentId)
    .replace('{channel_id}', made.discussion)
    .replace('{task_id}', newId());
}

const MessagePreview = z.object({
  sequence: z.number(),
  sender_id: z.string(),
  event_type: z.string(),
  text: z.string(),
  created_at: z.string(),
});
const PreviewsPage = z.object({
  channels: z.array(Channel),
  previews: z.record(
    z.string(),
    z.object({
      last_sequence: z.number(),
      last_activity_at: z.string().nullable(),
      last_message: MessagePreview.nullable(),
    }),
  ),
});
const ActivityReply = z.object({
  as_of: z.string(),
  online_window_seconds: z.number(),
  channels_read: z.number(),
  agents: z.array(
    z.object({ agent_id: z.string(), last_seen_at: z.string(), channel_id: z.string(), online: z.boolean() }),
  ),
});

describe('bridge API: channel previews and agent activity, for the console', () => {
  const previewsOf = async (as: string) => {
    const reply = await call(a.url, '/v1/channels?preview=true', { token: as });
    expect(reply.status).toBe(200);
    return PreviewsPage.parse(reply.body).previews;
  };
  const activityOf = async (as: string) => {
    const reply = await call(b.url, '/v1/activity', { token: as });
    expect(reply.status).toBe(200);
    return ActivityReply.parse(reply.body);
  };

  it('previews each channel with its last message the caller may see, and no previews unless asked', async () => {
    const opened = await call(a.url, '/v1/channels', {
      token: token.alice,
      body: { type: 'conversation', target: 'echo' },
    });
    const chat = ChannelReply.parse(opened.body).channel.channel_id;
    await post(chat, token.alice, { text: 'preview me' });
    await untilText(chat, 'echo: preview me');
    const log = await logOf(chat, token.alice);
    const answer = log.envelopes.findLast((e) => e.event_type === EV_TEXT);
    expect(answer?.event_data['text']).toBe('echo: preview me');
    expect((await previewsOf(token.alice))[chat]).toEqual({
      last_sequence: log.last_sequence,
      last_activity_at: log.envelopes.at(-1)?.created_at,
      last_message: {
        sequence: answer?.sequence,
        sender_id: echo.agentId,
        event_type: EV_TEXT,
        text: 'echo: preview me',
        created_at: answer?.created_at,
      },
    });
    const plain = await call(a.url, '/v1/channels', { token: token.alice });
    expect(Object.hasOwn(z.record(z.string(), z.unknown()).parse(plain.body), 'previews')).toBe(false);

    // A text to dave only: alice and the operator see it as the last message, bob (outside its audience) does not.
    const flow = await openWithBob({
      type: 'workflow',
      target: ['bob', 'dave'],
      knobs: { graph: roundRobin(['alice', 'bob', 'dave']).toDict() },
    });
    await post(flow, token.alice, { text: 'to dave only', audience: [dave.agentId] });
    const full = await logOf(flow, token.operator);
    const bobs = await logOf(flow, token.bob);
    const secret = full.envelopes.at(-1);
    const expected = {
      last_sequence: full.last_sequence,
      last_activity_at: secret?.created_at,
      last_message: {
        sequence: secret?.sequence,
        sender_id: id.alice,
        event_type: EV_TEXT,
        text: 'to dave only',
        created_at: secret?.created_at,
      },
    };
    expect((await previewsOf(token.alice))[flow]).toEqual(expected);
    expect((await previewsOf(token.operator))[flow]).toEqual(expected);
    expect((await previewsOf(token.bob))[flow]).toEqual({
      last_sequence: full.last_sequence,
      last_activity_at: bobs.envelopes.at(-1)?.created_at,
      last_message: null,
    });
    expect(JSON.stringify(await previewsOf(token.bob)).includes('to dave only')).toBe(false);
    expect(refusal(await call(a.url, '/v1/channels?preview=yes', { token: token.alice }))).toEqual([
      400,
      'invalid_request',
    ]);
  });

  it("says when each agent was last seen in the caller's channels, and that an agent seen just now is online", async () => {
    const opened = await call(a.url, '/v1/channels', {
      token: token.alice,
      body: { type: 'conversation', target: 'echo' },
    });
    const chat = ChannelReply.parse(opened.body).channel.channel_id;
    await post(chat, token.alice, { text: 'are you there?' });
    await untilText(chat, 'echo: are you there?');
    const reply = (await logOf(chat, token.alice)).envelopes.findLast((e) => e.sender_id === echo.agentId);

    const alices = await activityOf(token.alice);
    expect(alices.online_window_seconds).toBe(300);
    expect(alices.agents.find((x) => x.agent_id === echo.agentId)).toEqual({
      agent_id: echo.agentId,
      last_seen_at: reply?.created_at,
      channel_id: chat,
      online: true,
    });
    const operators = await activityOf(token.operator);
    expect(operators.agents.find((x) => x.agent_id === echo.agentId)?.last_seen_at).toBe(reply?.created_at);
    // Bob shares no channel with echo: he does not see when echo was around.
    const bobs = await activityOf(token.bob);
    expect(bobs.agents.map((x) => x.agent_id)).not.toContain(echo.agentId);
    expect(bobs.agents.map((x) => x.agent_id)).toContain(id.alice);
    expect(bobs.channels_read).toBe((await allChannels(token.bob, 'limit=100')).length);
  });
});

describe('bridge API: refusals by route class', () => {
  const routes = bridgeRoutes({ operator: null, signIn: () => Promise.reject(new Error('not called')) });
  const now = () => Math.floor(Date.now() / 1000);

  it('answers 401 to no token, a tampered, an expired and a foreign token on every route that needs one', async () => {
    const mine = new SessionTokens(secret);
    const [body = '', mac = ''] = token.alice.split('.');
    const claims = z.record(z.string(), z.unknown()).parse(JSON.parse(Buffer.from(body, 'base64url').toString()));
    const tampered = `${Buffer.from(JSON.stringify({ ...claims, operator: true })).toString('base64url')}.${mac}`;
    const expired = mine.issue({ sub: 'alice', operator: false, iat: now() - 7200, exp: now() - 1 });
    const foreign = new SessionTokens(randomBytes(32)).issue({
      sub: 'alice',
      operator: false,
      iat: now(),
      exp: now() + 3600,
    });
    const guarded = routes.filter((r) => r.access !== 'open');
    expect(routes.filter((r) => r.access === 'open').map((r) => r.path)).toEqual(['/v1/session']);
    for (const r of guarded) {
      const path = samplePath(r.path);
      const body = r.method === 'POST' ? { text: 'x' } : undefined;
      for (const [what, bad] of [
        ['none', undefined],
        ['tampered', tampered],
        ['expired', expired],
        ['foreign', foreign],
      ] as const) {
        const reply = await call(a.url, path, {
          method: r.method,
          ...(bad === undefined ? {} : { token: bad }),
          ...(body === undefined ? {} : { body }),
        });
        expect([r.method, r.path, what, ...refusal(reply)]).toEqual([r.method, r.path, what, 401, 'auth_failed']);
      }
    }
    // The same token, its expiry still ahead, is good.
    const fresh = mine.issue({ sub: 'alice', operator: false, iat: now(), exp: now() + 60 });
    expect((await call(a.url, '/v1/me', { token: fresh })).status).toBe(200);
  });

  it('answers 403 to a person on an operator route and to the operator on every write', async () => {
    for (const r of routes.filter((x) => x.access === 'operator')) {
      expect([r.path, ...refusal(await call(a.url, samplePath(r.path), { token: token.alice }))]).toEqual([
        r.path,
        403,
        'access_denied',
      ]);
    }
    const writes = routes.filter((x) => x.access === 'person');
    expect(writes.map((r) => `${r.method} ${r.path}`).sort()).toEqual(
      [
        'GET /v1/me/stream',
        'POST /v1/channels',
        'POST /v1/channels/{channel_id}/close',
        'POST /v1/channels/{channel_id}/envelopes',
      ].sort(),
    );
    for (const r of writes) {
      const reply = await call(a.url, samplePath(r.path), {
        method: r.method,
        token: token.operator,
        ...(r.method === 'POST' ? { body: { type: 'conversation', target: 'echo' } } : {}),
      });
      expect([r.path, ...refusal(reply)]).toEqual([r.path, 403, 'access_denied']);
    }
  });

  it("answers 404 to a person's reads of another's channel as of one that does not exist, AG2's 422 to a post, 403 to a close", async () => {
    for (const suffix of ['', '/state', '/log', '/stream']) {
      const reply = await call(a.url, `/v1/channels/${made.discussion}${suffix}`, { token: token.bob });
      expect([suffix, ...refusal(reply)]).toEqual([suffix, 404, 'not_found']);
    }
    for (const [suffix, body, status, code] of [
      ['/envelopes', { text: 'x' }, 422, 'protocol_error'],
      ['/close', {}, 403, 'access_denied'],
    ] as const) {
      const reply = await call(a.url, `/v1/channels/${made.discussion}${suffix}`, { token: token.bob, body });
      expect([suffix, ...refusal(reply)]).toEqual([suffix, status, code]);
    }
    const missing = await call(a.url, `/v1/channels/${newId()}`, { token: token.operator });
    expect(refusal(missing)).toEqual([404, 'not_found']);
  });
});

describe('bridge API: the OpenAPI document and bad requests', () => {
  it('/v1/openapi.json lists exactly the routes of bridgeRoutes', async () => {
    const doc = z
      .object({ paths: z.record(z.string(), z.record(z.string(), z.unknown())) })
      .parse((await call(a.url, '/v1/openapi.json')).body);
    const documented = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
    );
    const routed = [
      ...bridgeRoutes({ operator: null, signIn: () => Promise.reject(new Error('not called')) }),
      ...Object.values(a2aRoutes()),
      mcpRoute(),
    ].map((r) => `${r.method} ${r.path}`);
    expect(documented.sort()).toEqual(routed.sort());
    expect(new Set(routed).size).toBe(routed.length);
  });

  it('refuses an unknown route, a wrong method, a body that is not JSON or not application/json, and one too large', async () => {
    expect(refusal(await call(a.url, '/v2/agents', { token: token.alice }))).toEqual([404, 'not_found']);
    expect(refusal(await call(a.url, '/v1/agents', { method: 'DELETE', token: token.alice }))).toEqual([
      405,
      'invalid_request',
    ]);
    expect(refusal(await call(a.url, '/v1/session', { method: 'GET' }))).toEqual([405, 'invalid_request']);
    expect(
      refusal(await call(a.url, '/v1/session', { body: 'name=alice', headers: { 'content-type': 'text/plain' } })),
    ).toEqual([415, 'invalid_request']);
    expect(refusal(await call(a.url, '/v1/session', { body: '{"name": "alice",' }))).toEqual([400, 'invalid_request']);
    // One byte past the default limit (256 KiB) is refused; a body of the limit is parsed.
    const filler = (bytes: number) => JSON.stringify({ name: 'alice', api_key: 'x'.repeat(bytes) });
    const overhead = filler(0).length;
    expect(refusal(await callOnce(a.url, '/v1/session', { body: filler(256 * 1024 - overhead + 1) }))).toEqual([
      413,
      'invalid_request',
    ]);
    expect(refusal(await call(a.url, '/v1/session', { body: filler(256 * 1024 - overhead) }))).toEqual([
      400,
      'invalid_request',
    ]);
  });

  it('closes the connection after a 413, so the next request on a kept-alive client is answered', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const big = JSON.stringify({ name: 'alice', api_key: 'x'.repeat(300 * 1024) });
      const first = await postWith(agent, `${a.url}/v1/session`, big);
      expect([first.status, first.connection]).toEqual([413, 'close']);
      const second = await postWith(agent, `${a.url}/v1/session`, JSON.stringify({ name: 'alice', api_key: 'nope' }));
      expect(second.status).toBe(401);
    } finally {
      agent.destroy();
    }
  });

  it('answers a 1 MB string and deep nesting in a field with a bounded typed error, and keeps serving', async () => {
    const path = `/v1/channels/${made.discussion}/envelopes`;
    const huge = await callOnce(a.url, path, {
      token: token.alice,
      body: JSON.stringify({ text: 'x'.repeat(1024 * 1024) }),
    });
    expect([...refusal(huge), ErrorReply.parse(huge.body).error.message]).toEqual([
      413,
      'invalid_request',
      'the body exceeds 262144 bytes',
    ]);
    const long = await call(a.url, path, { token: token.alice, body: { text: 'x'.repeat(64 * 1024 + 1) } });
    expect(refusal(long)).toEqual([400, 'invalid_request']);
    // Deep nesting is refused by the bridge before it parses the body (50 000 levels would overflow a stack where
    // the request is serialized for the hub).
    for (const depth of [1000, 50_000]) {
      const nested = `{"event_type":"x.nested","event_data":{"v":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
      const deep = await call(a.url, path, { token: token.alice, body: nested });
      expect([...refusal(deep), ErrorReply.parse(deep.body).error.message]).toEqual([
        400,
        'invalid_request',
        'the body nests deeper than 64 levels',
      ]);
    }
    expect((await call(a.url, '/v1/me', { token: token.alice })).status).toBe(200);
    expect((await call(b.url, '/v1/me', { token: token.alice })).status).toBe(200);
  });

  it('answers 400 with the typed body to malformed percent-encoding in a path parameter or the query, and keeps serving', async () => {
    const channel = newId();
    const targets = [
      ['GET', '/v1/agents/%'],
      ['GET', '/v1/agents/%Z'],
      ['GET', '/v1/channels/%ZZ/log'],
      ['GET', '/v1/agents/%E0%A4%A'],
      ['GET', '/v1/agents/%E0%A4%A/resume'],
      ['GET', '/v1/tasks/%ZZ'],
      ['POST', '/v1/channels/%/envelopes'],
      ['GET', '/v1/agents?query=%'],
      ['GET', '/v1/agents?query=%Z'],
      ['GET', `/v1/channels/${channel}/log?since=%ZZ`],
      ['GET', '/v1/tasks?%E0%A4%A=1'],
      ['GET', `/v1/channels/${channel}/stream?since=%E0%A4%A`],
      ['GET', '/v1/me/stream?last_event_id=%ZZ'],
    ] as const;
    for (const [method, target] of targets) {
      for (const as of [token.alice, undefined]) {
        const reply = await call(a.url, target, {
          method,
          ...(as === undefined ? {} : { token: as }),
          ...(method === 'POST' ? { body: { text: 'x' } } : {}),
        });
        const where = target.includes('?') ? 'query string' : 'path';
        expect([method, target, reply.status, reply.body]).toEqual([
          method,
          target,
          400,
          { error: { code: 'invalid_request', message: `the ${where} is not valid percent-encoding (UTF-8)` } },
        ]);
      }
    }
    expect((await call(a.url, '/v1/me', { token: token.alice })).status).toBe(200);
  });
});

describe('bridge API: where the token travels, and one budget per person', () => {
  it('refuses ?access_token= off the event streams with 401 saying to use the header, which it accepts', async () => {
    const log = `/v1/channels/${made.discussion}/log`;
    const message =
      'send the token in the Authorization: Bearer header: ?access_token= is taken by the event streams only';
    for (const [method, path] of [
      ['GET', '/v1/me'],
      ['GET', '/v1/channels'],
      ['GET', log],
      ['POST', `/v1/channels/${made.discussion}/envelopes`],
    ] as const) {
      const body = method === 'POST' ? { text: 'token in the query' } : undefined;
      // In the query alone, and beside a good header: either way it travelled in the URL.
      for (const header of [undefined, token.alice]) {
        const reply = await call(a.url, `${path}?access_token=${token.alice}`, {
          method,
          ...(header === undefined ? {} : { token: header }),
          ...(body === undefined ? {} : { body }),
        });
        expect([path, header !== undefined, reply.status, reply.body]).toEqual([
          path,
          header !== undefined,
          401,
          { error: { code: 'auth_failed', message } },
        ]);
      }
    }
    expect((await call(a.url, '/v1/me', { token: token.alice })).status).toBe(200);
    expect(LogPage.parse((await call(a.url, log, { token: token.alice })).body).envelopes.length).toBeGreaterThan(0);
    // The event streams take it: a browser's EventSource cannot set headers.
    const stream = await openSse(
      `${a.url}/v1/channels/${made.discussion}/stream?since=1&access_token=${token.alice}`,
      {},
    );
    try {
      expect(stream.status).toBe(200);
      expect(envelopesOf([await stream.next()])[0]?.sequence).toBe(1);
    } finally {
      stream.close();
    }
    const deliveries = await openSse(`${a.url}/v1/me/stream?access_token=${token.alice}`, {});
    deliveries.close();
    expect(deliveries.status).toBe(200);
  });

  it('ten tokens of one person share one budget, two of the operator another: exactly the burst is admitted', async () => {
    await using limited = await startBridge(
      stackBridgeOptions(stack, {
        apiKeys: PEOPLE,
        secret,
        operatorKey: OPERATOR_KEY,
        rateBurst: 5,
        ratePerMinute: 1,
      }),
    );
    const mine = new SessionTokens(secret);
    const now = Math.floor(Date.now() / 1000);
    const issue = (sub: string, i: number) =>
      mine.issue({ sub, operator: sub === '$operator', iat: now - i, exp: now + 3600 - i });
    const alice = Array.from({ length: 10 }, (_, i) => issue('alice', i));
    expect(new Set(alice).size).toBe(10);
    const statuses = async (tokens: readonly string[], rounds: number): Promise<Record<number, number>> => {
      const counts: Record<number, number> = {};
      for (let round = 0; round < rounds; round++) {
        for (const t of tokens) {
          const { status } = await call(limited.url, '/v1/me', { token: t });
          counts[status] = (counts[status] ?? 0) + 1;
        }
      }
      return counts;
    };
    // 20 requests over ten tokens, burst 5 and 1 a minute: 5 admitted, 15 refused.
    expect(await statuses(alice, 2)).toEqual({ 200: 5, 429: 15 });
    expect(await statuses([issue('bob', 0)], 6)).toEqual({ 200: 5, 429: 1 });
    expect(await statuses([issue('$operator', 0), issue('$operator', 1)], 3)).toEqual({ 200: 5, 429: 1 });
    const refused = await call(limited.url, '/v1/me', { token: alice[3] });
    expect([refused.status, refused.body]).toEqual([
      429,
      { error: { code: 'rate_limited', message: 'too many requests; slow down' } },
    ]);
  });

  it('answers 429 to a flood of sign-ins: per name from any address, per address for any name', async () => {
    await using limited = await startBridge(
      stackBridgeOptions(stack, { apiKeys: PEOPLE, secret, signInBurst: 3, signInPerMinute: 1 }),
    );
    const signInFrom = (from: string, name: string, key: string) =>
      callOnce(limited.url, '/v1/session', { from, body: JSON.stringify({ name, api_key: key }) });
    const tooMany = [429, { error: { code: 'rate_limited', message: 'too many sign-ins; slow down' } }];
    // alice's name: three sign-ins, each from an address of its own, then none from a fresh one, right key or not.
    for (const from of ['127.0.0.2', '127.0.0.3', '127.0.0.4']) {
      expect([from, (await signInFrom(from, 'alice', KEYS.alice)).status]).toEqual([from, 200]);
    }
    for (const key of [KEYS.alice, 'a guess']) {
      const flood = await signInFrom('127.0.0.5', 'alice', key);
      expect([flood.status, flood.body]).toEqual(tooMany);
    }
    // One address: three sign-ins whatever the names, then none, even with bob's right key.
    for (const name of ['mallory-1', 'mallory-2', 'mallory-3']) {
      expect([name, (await signInFrom('127.0.0.6', name, 'k')).status]).toEqual([name, 401]);
    }
    const spray = await signInFrom('127.0.0.6', 'bob', KEYS.bob);
    expect([spray.status, spray.body]).toEqual(tooMany);
    // bob's name and another address were not spent by either flood.
    expect((await signInFrom('127.0.0.7', 'bob', KEYS.bob)).status).toBe(200);
  });
});

/** A POST over `agent` (kept-alive sockets): its status and `connection` header. */
function postWith(agent: Agent, url: string, body: string): Promise<{ status: number; connection: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: String(res.headers.connection ?? '') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
