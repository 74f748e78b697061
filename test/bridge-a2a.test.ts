/**
 * Network agents as A2A servers, through the bridge, against a secured stack: an agent-runner hosts `oracle` on the
 * scripted model, an SDK agent `gate` answers only when the test lets it; people reach both with the A2A JS client
 * (card, send, stream, get, list, cancel, a follow-up in the same context, a resubscription on another replica) and
 * with plain JSON-RPC (A2A 0.3), and hostile callers get typed errors with nothing written.
 */
import { TaskState } from '@a2a-js/sdk';
import { startBridge, type Bridge, type BridgeOptions } from '@ag2net/bridge';
import { HubClient } from '@ag2net/client';
import { EV_PACKET, EV_TEXT, TextDataSchema, textData } from '@ag2net/protocol';
import { closedPort, waitFor } from '@ag2net/test-support';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Gates,
  a2aClient,
  asTask,
  collect,
  gatedAnswers,
  sendRequest,
  summarize,
  taskIdOfEvent,
  textOf,
  userMessage,
  writeA2aAgents,
} from './support/bridge-a2a.js';
import { acceptingInvites } from './support/console-agents.js';
import { call, callOnce } from './support/bridge-http.js';
import { startRunner, type ServiceProcess } from './support/processes.js';
import { startSecuredStack, type SecuredStack } from './support/secured-stack.js';
import { stackBridgeOptions } from './support/stack-bridge.js';

const PEOPLE = { alice: 'k-alice-a2a', bob: 'k-bob-a2a', carol: 'k-carol-a2a' } as const;
const AGENT_KEYS = {
  oracle: 'k-oracle-a2a',
  gate: 'k-gate-a2a',
  broken: 'k-broken-a2a',
  asker: 'k-asker-a2a',
  parts: 'k-parts-a2a',
} as const;
/** The oracle's scripted answers, one per question, in the order the tests below ask them. */
const ANSWERS = ['Paris.', 'Berlin.', 'Rome.'] as const;
const MAX_BODY_BYTES = 64 * 1024;
const OPERATOR_KEY = 'k-operator-a2a';

const RpcError = z.object({ jsonrpc: z.literal('2.0'), error: z.object({ code: z.number(), message: z.string() }) });
const LogPage = z.object({ last_sequence: z.number() });

let stack: SecuredStack;
let dir = '';
let runner: ServiceProcess | undefined;
let sdk: HubClient;
let a: Bridge;
let b: Bridge;
let options: BridgeOptions;
const token = { alice: '', bob: '' };
const gates = new Gates();
const gateOf = (text: string) => gates.of(text);

async function signIn(bridge: Bridge, name: keyof typeof PEOPLE): Promise<string> {
  const reply = await call(bridge.url, '/v1/session', { body: { name, api_key: PEOPLE[name] } });
  return z.object({ token: z.string() }).parse(reply.body).token;
}

async function lastSequence(channelId: string): Promise<number> {
  return LogPage.parse((await call(b.url, `/v1/channels/${channelId}/log?limit=1`, { token: token.alice })).body)
    .last_sequence;
}

async function channelCount(): Promise<number> {
  const page = z.object({ channels: z.array(z.unknown()) });
  return page.parse((await call(b.url, '/v1/channels?limit=500', { token: token.alice })).body).channels.length;
}

beforeAll(async () => {
  stack = await startSecuredStack({ apiKeys: { ...PEOPLE, ...AGENT_KEYS } });
  dir = await mkdtemp(join(tmpdir(), 'ag2net-a2a-'));
  const runnerKeys = { oracle: AGENT_KEYS.oracle, broken: AGENT_KEYS.broken };
  await writeFile(join(dir, 'keys.json'), JSON.stringify(runnerKeys), { mode: 0o600 });
  // `broken`'s model is at a port nobody serves: its turns fail, and it says so with ag2.turn.failed.
  const nowhere = `http://127.0.0.1:${await closedPort()}/v1`;
  const configPath = await writeA2aAgents(dir, { answers: ANSWERS, nowhere });
  runner = startRunner({
    natsUrl: stack.url,
    prefix: stack.prefix,
    configPath,
    name: 'a2a-runner',
    extraArgs: [
      '--creds',
      stack.paths.registrantCreds,
      '--creds-dir',
      join(dir, 'creds'),
      '--api-keys',
      join(dir, 'keys.json'),
    ],
  });
  sdk = await HubClient.connect({ servers: stack.url, prefix: stack.prefix, creds: stack.registrantCreds });
  await sdk.register(
    { name: 'gate', auth: { scheme: 'api_key', claim: { token: AGENT_KEYS.gate } } },
    { handler: gatedAnswers(gates) },
  );
  // `asker` answers a first question with a question, handing the turn back; a second one with a text.
  await sdk.register(
    { name: 'asker', auth: { scheme: 'api_key', claim: { token: AGENT_KEYS.asker } } },
    {
      handler: acceptingInvites(async (envelope, client) => {
        if (envelope.event_type !== EV_TEXT) return;
        const text = String(envelope.event_data['text']);
        const reply = text.startsWith('Book')
          ? {
              event_type: EV_PACKET,
              event_data: { body: 'For which day?', routing: { kind: 'handoff', target: envelope.sender_id } },
            }
          : { event_type: EV_TEXT, event_data: { text: `Booked for ${text}.` } };
        await client.sendEnvelope({
          channel_id: envelope.channel_id,
          ...reply,
          audience: null,
          causation_id: envelope.envelope_id,
        });
      }),
    },
  );
  // `parts` answers a message of parts with what its data parts held, as a data part after a text one.
  await sdk.register(
    { name: 'parts', auth: { scheme: 'api_key', claim: { token: AGENT_KEYS.parts } } },
    {
      handler: acceptingInvites(async (envelope, client) => {
        if (envelope.event_type !== EV_TEXT) return;
        const data = (TextDataSchema.parse(envelope.event_data).parts ?? []).flatMap((p) =>
          p.kind === 'data' ? [p.data] : [],
        );
        await client.sendEnvelope({
          channel_id: envelope.channel_id,
          event_type: EV_TEXT,
          event_data: textData(['Got:', { kind: 'data', data, media_type: 'application/vnd.echo+json' }]),
          audience: null,
          causation_id: envelope.envelope_id,
        });
      }),
    },
  );
  options = stackBridgeOptions(stack, {
    apiKeys: PEOPLE,
    secret: randomBytes(32),
    operatorKey: OPERATOR_KEY,
    maxBodyBytes: MAX_BODY_BYTES,
    rateBurst: 100_000,
  });
  a = await startBridge(options);
  b = await startBridge(options);
  token.alice = await signIn(a, 'alice');
  token.bob = await signIn(b, 'bob');
  for (const name of ['oracle', 'broken']) {
    await waitFor(
      async () => ((await call(b.url, `/v1/agents/${name}`, { token: token.alice })).status === 200 ? true : undefined),
      { timeoutMs: 30_000, what: `the runner registering ${name}` },
    );
  }
}, 90_000);

afterAll(async () => {
  await a?.close();
  await b?.close();
  await sdk?.close();
  await runner?.stop();
  await stack?.stop();
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

describe('A2A: cards', () => {
  it('serves a card per agent from its passport, resume and skill, with streaming and the bearer scheme', async () => {
    const client = await a2aClient(a.url, 'oracle', token.alice);
    const card = await client.getAgentCard();
    expect(card.name).toBe('oracle');
    expect(card.description).toContain('Knows every capital.');
    expect(card.capabilities?.streaming).toBe(true);
    expect(card.supportedInterfaces.map((i) => [i.url, i.protocolBinding, i.protocolVersion])).toEqual([
      [`${a.url}/a2a/agents/oracle`, 'JSONRPC', '1.0'],
      [`${a.url}/a2a/agents/oracle`, 'JSONRPC', '0.3'],
    ]);
    expect(card.skills.map((s) => [s.id, s.name, s.description])).toEqual([
      ['skill', 'capitals', 'Names the capital of a country.'],
      ['capability:geography', 'geography', 'Knows every capital.'],
    ]);
    expect(Object.keys(card.securitySchemes)).toEqual(['bearer']);
    expect(card.securityRequirements).toEqual([{ schemes: { bearer: { list: [] } } }]);
  });

  it('lists the agents with their card and endpoint URLs, and serves the 0.3 card to a client that names no version', async () => {
    const list = z
      .object({ agents: z.array(z.object({ name: z.string(), card_url: z.string(), url: z.string() })) })
      .parse((await call(a.url, '/a2a/agents', { token: token.alice })).body);
    expect(list.agents.map((x) => x.name).sort()).toEqual(['asker', 'broken', 'gate', 'oracle', 'parts']);
    expect(list.agents.find((x) => x.name === 'oracle')?.card_url).toBe(
      `${a.url}/a2a/agents/oracle/.well-known/agent-card.json`,
    );
    const legacy = await call(a.url, '/a2a/agents/oracle/.well-known/agent-card.json', { token: token.alice });
    expect(legacy.body).toMatchObject({
      name: 'oracle',
      url: `${a.url}/a2a/agents/oracle`,
      protocolVersion: '0.3',
      preferredTransport: 'JSONRPC',
      capabilities: { streaming: true },
      securitySchemes: { bearer: { type: 'http', scheme: 'Bearer' } },
    });
    // A person is no A2A agent, and neither is a name nobody has.
    expect((await call(a.url, '/a2a/agents/bob/.well-known/agent-card.json', { token: token.alice })).status).toBe(404);
    expect((await call(a.url, '/a2a/agents/nobody/.well-known/agent-card.json', { token: token.alice })).status).toBe(
      404,
    );
    expect((await call(a.url, '/a2a/agents/oracle/.well-known/agent-card.json')).status).toBe(401);
  });
});

describe('A2A: tasks', () => {
  let contextId = '';
  let firstTask = '';

  it('answers message/send with the completed task and the exact scripted answer', async () => {
    const client = await a2aClient(a.url, 'oracle', token.alice);
    const task = asTask(await client.sendMessage(sendRequest(userMessage('Capital of France?'))));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(task.status?.message)).toBe(ANSWERS[0]);
    expect(task.artifacts.map((x) => textOf({ ...userMessage(''), parts: x.parts }))).toEqual([ANSWERS[0]]);
    expect(task.history.map((m) => textOf(m))).toEqual(['Capital of France?', ANSWERS[0]]);
    const sequence = z.object({ ag2net: z.object({ sequence: z.number() }) }).parse(task.history[0]?.metadata);
    expect(task.id).toBe(`${task.contextId}.${sequence.ag2net.sequence}`);
    contextId = task.contextId;
    firstTask = task.id;
    // The context is a conversation channel of alice and oracle.
    const channel = z
      .object({ channel: z.object({ manifest: z.object({ type: z.string() }), state: z.string() }) })
      .parse((await call(b.url, `/v1/channels/${contextId}`, { token: token.alice })).body).channel;
    expect([channel.manifest.type, channel.state]).toEqual(['conversation', 'active']);
  });

  it('carries data parts both ways: a request of text and data, an answer with a data part; a file part is refused', async () => {
    const client = await a2aClient(a.url, 'parts', token.alice);
    const plan = { steps: ['build', 'test'], days: 2 };
    const message = userMessage('The plan:');
    message.parts.push({ content: { $case: 'data', value: plan }, metadata: undefined, filename: '', mediaType: '' });
    const task = asTask(await client.sendMessage(sendRequest(message)));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const contents = (parts: readonly { content?: unknown; mediaType: string }[]) =>
      parts.map((p) => [p.content, p.mediaType]);
    // The request as the channel's log holds it, read back into the task's history.
    expect(contents(task.history[0]?.parts ?? [])).toEqual([
      [{ $case: 'text', value: 'The plan:' }, 'text/plain'],
      [{ $case: 'data', value: plan }, 'application/json'],
    ]);
    expect(task.artifacts.map((x) => contents(x.parts))).toEqual([
      [
        [{ $case: 'text', value: 'Got:' }, 'text/plain'],
        [{ $case: 'data', value: [plan] }, 'application/vnd.echo+json'],
      ],
    ]);
    const before = await channelCount();
    const file = userMessage('see attached');
    file.parts.push({
      content: { $case: 'url', value: 'https://example.com/a.pdf' },
      metadata: undefined,
      filename: 'a.pdf',
      mediaType: 'application/pdf',
    });
    await expect(client.sendMessage(sendRequest(file))).rejects.toThrow('only text and data parts are accepted');
    expect(await channelCount()).toBe(before);
  });

  it('streams a new context: the task working, then the answer and completed, in that order', async () => {
    const client = await a2aClient(a.url, 'oracle', token.alice);
    const events = await collect(client.sendMessageStream(sendRequest(userMessage('Capital of Germany?'))));
    expect(events.map(summarize)).toEqual([
      { kind: 'task', state: 'TASK_STATE_WORKING' },
      { kind: 'artifact', text: ANSWERS[1] },
      { kind: 'status', state: 'TASK_STATE_COMPLETED', text: ANSWERS[1] },
    ]);
    expect(new Set(events.map(taskIdOfEvent)).size).toBe(1);
  });

  it('continues a context with a follow-up: the same channel, a new task, and both tasks read from any replica', async () => {
    const client = await a2aClient(a.url, 'oracle', token.alice);
    const task = asTask(await client.sendMessage(sendRequest(userMessage('And of Italy?', contextId))));
    expect([task.contextId, task.status?.state, textOf(task.status?.message)]).toEqual([
      contextId,
      TaskState.TASK_STATE_COMPLETED,
      ANSWERS[2],
    ]);
    expect(task.id).not.toBe(firstTask);
    const onB = await a2aClient(b.url, 'oracle', token.alice);
    const first = await onB.getTask({ tenant: '', id: firstTask, historyLength: undefined });
    expect([first.status?.state, textOf(first.status?.message)]).toEqual([TaskState.TASK_STATE_COMPLETED, ANSWERS[0]]);
    const listed = await onB.listTasks({
      tenant: '',
      contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: undefined,
      pageToken: '',
      historyLength: undefined,
      statusTimestampAfter: undefined,
      includeArtifacts: undefined,
    });
    expect(listed.tasks.map((t) => t.id)).toEqual([task.id, firstTask]);
    expect(listed.totalSize).toBe(2);
  });

  it('cancels a task the agent has not answered: the channel closes as the caller, the task is canceled', async () => {
    const client = await a2aClient(a.url, 'gate', token.alice);
    const pending = asTask(await client.sendMessage(sendRequest(userMessage('hold this'), true)));
    expect(pending.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    const canceled = await client.cancelTask({ tenant: '', id: pending.id, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const channel = z
      .object({ channel: z.object({ state: z.string(), close_reason: z.string() }) })
      .parse((await call(b.url, `/v1/channels/${pending.contextId}`, { token: token.alice })).body).channel;
    expect(channel).toEqual({ state: 'closed', close_reason: 'canceled' });
    await expect(client.cancelTask({ tenant: '', id: pending.id, metadata: undefined })).rejects.toMatchObject({
      name: 'TaskNotCancelableError',
    });
    // A follow-up in the ended context is refused; nothing is written.
    const before = await lastSequence(pending.contextId);
    await expect(client.sendMessage(sendRequest(userMessage('still there?', pending.contextId)))).rejects.toMatchObject(
      {
        name: 'UnsupportedOperationError',
      },
    );
    expect(await lastSequence(pending.contextId)).toBe(before);
    gateOf('hold this').open();
  });
});

describe('A2A: plain JSON-RPC (0.3, as curl sends it)', () => {
  it('answers message/send and tasks/get without a version header, in A2A 0.3 shapes', async () => {
    const rpc = (body: unknown) => call(b.url, '/a2a/agents/oracle', { token: token.alice, body });
    const sent = await rpc({
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: {
        message: { kind: 'message', role: 'user', messageId: 'curl-1', parts: [{ kind: 'text', text: 'Ping?' }] },
        configuration: { blocking: false },
      },
    });
    const task = z
      .object({
        id: z.literal(1),
        result: z.object({
          kind: z.literal('task'),
          id: z.string(),
          contextId: z.string(),
          status: z.object({ state: z.string() }),
        }),
      })
      .parse(sent.body).result;
    expect(task.status.state).toBe('working');
    const got = await rpc({ jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { id: task.id } });
    expect(z.object({ result: z.object({ id: z.string() }) }).parse(got.body).result.id).toBe(task.id);
  });

  it('streams message/stream as Server-Sent Events: the task working, the answer, the final completed status', async () => {
    gateOf('Stream me').open();
    const res = await fetch(`${b.url}/a2a/agents/gate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token.alice}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'stream-1',
        method: 'message/stream',
        params: {
          message: { kind: 'message', role: 'user', messageId: 'curl-2', parts: [{ kind: 'text', text: 'Stream me' }] },
        },
      }),
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const events = (await res.text())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map(
        (line) =>
          z
            .object({ id: z.literal('stream-1'), result: z.looseObject({ kind: z.string() }) })
            .parse(JSON.parse(line.slice(6))).result,
      );
    const Status = z.object({ status: z.object({ state: z.string() }), final: z.boolean() });
    expect(events.map((e) => e.kind)).toEqual(['task', 'artifact-update', 'status-update']);
    expect(Status.parse(events[2])).toMatchObject({ status: { state: 'completed' }, final: true });
    expect(
      z.object({ artifact: z.object({ parts: z.array(z.object({ text: z.string() })) }) }).parse(events[1]).artifact
        .parts,
    ).toEqual([{ text: 'gate: Stream me' }]);
  });

  it('answers SendMessage of A2A 1.0 with its version header, and 404 for an agent nobody is', async () => {
    gateOf('Version one').open();
    const message = { messageId: 'v1-1', role: 'ROLE_USER', parts: [{ text: 'Version one' }] };
    const headers = { 'a2a-version': '1.0' };
    const body = { jsonrpc: '2.0', id: 3, method: 'SendMessage', params: { message } };
    const sent = await call(b.url, '/a2a/agents/gate', { token: token.alice, body, headers });
    const task = z
      .object({
        result: z.object({
          task: z.object({
            status: z.object({ state: z.string() }),
            artifacts: z.array(
              z.strictObject({ artifactId: z.string(), name: z.string(), parts: z.array(z.unknown()) }),
            ),
          }),
        }),
      })
      .parse(sent.body).result.task;
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(task.artifacts.map((x) => [x.name, x.parts])).toEqual([
      ['answer', [{ text: 'gate: Version one', mediaType: 'text/plain' }]],
    ]);
    const nobody = await call(b.url, '/a2a/agents/nobody', { token: token.alice, body, headers });
    expect([nobody.status, RpcError.parse(nobody.body).error.code]).toEqual([404, -32044]);
  });
});

describe('A2A: the agent asks back', () => {
  it('is input-required when the agent hands the turn back, and a reply naming the task goes on in its context', async () => {
    const client = await a2aClient(b.url, 'asker', token.alice);
    const asked = asTask(await client.sendMessage(sendRequest(userMessage('Book a table'))));
    expect([asked.status?.state, textOf(asked.status?.message)]).toEqual([
      TaskState.TASK_STATE_INPUT_REQUIRED,
      'For which day?',
    ]);
    const reply = { ...userMessage('Friday', asked.contextId), taskId: asked.id };
    const booked = asTask(await client.sendMessage(sendRequest(reply)));
    expect([booked.contextId, booked.status?.state, textOf(booked.status?.message)]).toEqual([
      asked.contextId,
      TaskState.TASK_STATE_COMPLETED,
      'Booked for Friday.',
    ]);
    // A completed task takes no reply of its own: the context takes a new message.
    await expect(
      client.sendMessage(sendRequest({ ...userMessage('Saturday', booked.contextId), taskId: booked.id })),
    ).rejects.toMatchObject({ name: 'UnsupportedOperationError' });
  });
});

describe('A2A: a failed turn', () => {
  it("fails the task with the reason of the agent's ag2.turn.failed", async () => {
    const client = await a2aClient(b.url, 'broken', token.alice);
    const task = asTask(await client.sendMessage(sendRequest(userMessage('Anyone there?'))));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(textOf(task.status?.message)).toMatch(/model/);
    expect(task.artifacts).toEqual([]);
  });
});

describe('A2A: hostile callers', () => {
  const send = (contextId: string) => ({
    jsonrpc: '2.0',
    id: 7,
    method: 'SendMessage',
    params: {
      message: { messageId: 'h-1', contextId, role: 'ROLE_USER', parts: [{ text: 'let me in' }] },
    },
  });
  const v1 = { 'a2a-version': '1.0' };
  let context = '';
  let mine = '';

  beforeAll(async () => {
    const client = await a2aClient(b.url, 'gate', token.alice);
    gateOf('mine').open();
    const task = asTask(await client.sendMessage(sendRequest(userMessage('mine'))));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    context = task.contextId;
    mine = task.id;
  });

  it('refuses a request without credentials with 401 and a JSON-RPC error, writing nothing', async () => {
    const before = [await lastSequence(context), await channelCount()];
    const reply = await call(b.url, '/a2a/agents/gate', { body: send(context), headers: v1 });
    expect(reply.status).toBe(401);
    expect(RpcError.parse(reply.body).error.code).toBe(-32040);
    const fresh = await call(b.url, '/a2a/agents/gate', { body: send(''), headers: v1 });
    expect(fresh.status).toBe(401);
    expect([await lastSequence(context), await channelCount()]).toEqual(before);
  });

  it("answers another person's context and task exactly as ones that do not exist", async () => {
    const before = await lastSequence(context);
    const rpc = async (body: unknown) =>
      RpcError.parse((await call(b.url, '/a2a/agents/gate', { token: token.bob, body, headers: v1 })).body).error;
    const theirs = await rpc(send(context));
    const missing = await rpc(send('01JZZZZZZZZZZZZZZZZZZZZZZZ'));
    expect(theirs.code).toBe(-32001);
    expect(theirs.message.replace(context, 'X')).toBe(missing.message.replace('01JZZZZZZZZZZZZZZZZZZZZZZZ', 'X'));
    const task = `${context}.2`;
    const get = (id: string) => rpc({ jsonrpc: '2.0', id: 8, method: 'GetTask', params: { id } });
    const [theirTask, noTask] = [await get(task), await get(`01JZZZZZZZZZZZZZZZZZZZZZZZ.2`)];
    expect(theirTask.code).toBe(-32001);
    expect(theirTask.message.replace(task, 'X')).toBe(noTask.message.replace('01JZZZZZZZZZZZZZZZZZZZZZZZ.2', 'X'));
    expect(await lastSequence(context)).toBe(before);
  });

  it('refuses the operator (403), who acts as nobody, and a person past the rate limit (429)', async () => {
    const before = [await lastSequence(context), await channelCount()];
    const session = await call(b.url, '/v1/session', { body: { name: '$operator', api_key: OPERATOR_KEY } });
    const operator = z.object({ token: z.string() }).parse(session.body).token;
    const asOperator = await call(b.url, '/a2a/agents/gate', { token: operator, body: send(context), headers: v1 });
    expect([asOperator.status, RpcError.parse(asOperator.body).error.code]).toEqual([403, -32041]);
    expect([await lastSequence(context), await channelCount()]).toEqual(before);
    // A replica with a budget of two requests a person: the third is refused before it reaches the hub.
    const strict = await startBridge({ ...options, rateBurst: 2, ratePerMinute: 1 });
    try {
      const get = { jsonrpc: '2.0', id: 9, method: 'GetTask', params: { id: mine } };
      const replies = [];
      for (let i = 0; i < 3; i++) {
        replies.push(await call(strict.url, '/a2a/agents/gate', { token: token.alice, body: get, headers: v1 }));
      }
      expect(replies.map((r) => r.status)).toEqual([200, 200, 429]);
      expect(z.object({ result: z.object({ id: z.string() }) }).parse(replies[1]?.body).result.id).toBe(mine);
      expect(RpcError.parse(replies[2]?.body).error.code).toBe(-32042);
    } finally {
      await strict.close();
    }
  });

  it('refuses a body over the size limit (413) and one nested too deep (400) before parsing, writing nothing', async () => {
    const before = await lastSequence(context);
    const huge = JSON.stringify(send(context)).replace('let me in', 'x'.repeat(MAX_BODY_BYTES));
    const tooBig = await callOnce(b.url, '/a2a/agents/gate', { token: token.alice, body: huge });
    expect([tooBig.status, RpcError.parse(tooBig.body).error.code]).toEqual([413, -32600]);
    let nested: unknown = 'deep';
    for (let i = 0; i < 100; i++) nested = { n: nested };
    const deepBody = { ...send(context), params: { ...send(context).params, metadata: nested } };
    const deep = await call(b.url, '/a2a/agents/gate', { token: token.alice, body: deepBody, headers: v1 });
    expect([deep.status, RpcError.parse(deep.body).error.code]).toEqual([400, -32600]);
    expect(RpcError.parse(deep.body).error.message).toContain('nests deeper');
    expect(await lastSequence(context)).toBe(before);
  });
});

describe('A2A: a revoked person', () => {
  it('ends the session: the request is refused with 401 as a session that ended, and so is every later one', async () => {
    const carol = await signIn(b, 'carol');
    gateOf('before revocation').open();
    const client = await a2aClient(b.url, 'gate', carol);
    const task = asTask(await client.sendMessage(sendRequest(userMessage('before revocation'))));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const operator = await HubClient.connect({
      servers: stack.url,
      prefix: stack.prefix,
      creds: stack.adminCreds,
      operator: true,
    });
    try {
      await operator.call('revokeIdentity', { name_or_id: 'carol' });
    } finally {
      await operator.close();
    }
    const get = { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: task.id } };
    const headers = { 'a2a-version': '1.0' };
    const refused = await call(b.url, '/a2a/agents/gate', { token: carol, body: get, headers });
    const first = RpcError.parse(refused.body);
    expect([refused.status, first.error.code, first.error.message]).toEqual([
      401,
      -32040,
      'this session ended: the hub no longer serves this identity; sign in again',
    ]);
    const again = await call(b.url, '/a2a/agents/gate', { token: carol, body: get, headers });
    expect([again.status, RpcError.parse(again.body).error.code]).toEqual([401, -32040]);
  });
});

describe('A2A: resubscribing on another replica', () => {
  it('resumes a stream whose bridge closed on a second replica, with no gap and no duplicate', async () => {
    const onA = await a2aClient(a.url, 'gate', token.alice);
    const stream = onA.sendMessageStream(sendRequest(userMessage('slow question')));
    const first = await collect(stream, () => true);
    expect(first.map(summarize)).toEqual([{ kind: 'task', state: 'TASK_STATE_WORKING' }]);
    const taskId = taskIdOfEvent(first[0] ?? { payload: undefined });
    // The replica that served the stream goes away; what it had not sent yet is in the log.
    await a.close();
    await stream.return(undefined);
    const onB = await a2aClient(b.url, 'gate', token.alice);
    const resumed = onB.resubscribeTask({ tenant: '', id: taskId });
    const snapshot = await resumed.next();
    expect(snapshot.done !== true && summarize(snapshot.value)).toEqual({ kind: 'task', state: 'TASK_STATE_WORKING' });
    gateOf('slow question').open();
    const rest = await collect(resumed);
    expect(rest.map(summarize)).toEqual([
      { kind: 'artifact', text: 'gate: slow question' },
      { kind: 'status', state: 'TASK_STATE_COMPLETED', text: 'gate: slow question' },
    ]);
    expect(new Set([...first, ...rest].map(taskIdOfEvent))).toEqual(new Set([taskId]));
    // Once completed, the task is read, not subscribed to.
    await expect(collect(onB.resubscribeTask({ tenant: '', id: taskId }))).rejects.toMatchObject({
      name: 'UnsupportedOperationError',
    });
  });
});
