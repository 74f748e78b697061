import { ackInvite, isInviteFor, type Logger } from '@ag2net/client';
import { EV_TURN_FAILED, OPERATOR_CALLER, type Envelope } from '@ag2net/protocol';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Agent, createDefaultHandler, createModel, createScriptedModel, registerAgent } from '../src/index.js';
import { turnFailedEnvelopeId } from '../src/runtime/turn-failure.js';
import { netKit, until } from './support.js';

const kit = netKit();
beforeAll(() => kit.start());
afterEach(async () => {
  await kit.closeAll();
  await stopEndpoint();
});
afterAll(() => kit.stop());

const KEY = 'sk-test-secret-key-0123456789';
const PROMPT = 'PROMPT-MARKER: what does a write-ahead log guarantee? '.repeat(40);

/** How the fake endpoint answers every `/chat/completions` call. */
type Behaviour = 'unauthorized' | 'server_error' | 'malformed' | 'slow' | 'echo';

let endpoint: { server: Server; calls: number; dropped: number } | null = null;

/** A fake OpenAI-compatible endpoint that fails every call the same way, counting the calls. */
async function startEndpoint(behaviour: Behaviour): Promise<string> {
  const state = { calls: 0, dropped: 0 };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    // The client gave up on the call before it was answered.
    res.on('close', () => {
      if (!res.writableEnded) state.dropped += 1;
    });
    req.on('end', () => {
      state.calls += 1;
      const json = { 'content-type': 'application/json' };
      switch (behaviour) {
        case 'unauthorized':
          // As OpenAI answers a wrong key, but quoting the whole key (and its header) back.
          res.writeHead(401, json).end(
            JSON.stringify({
              error: {
                message: `Incorrect API key provided: ${KEY} (header: Bearer ${KEY})`,
                type: 'invalid_request_error',
                code: 'invalid_api_key',
              },
            }),
          );
          return;
        case 'echo':
          // An endpoint whose error quotes the request back.
          res
            .writeHead(400, json)
            .end(JSON.stringify({ error: { message: `cannot read: ${PROMPT.slice(0, 80)}`, code: 'bad_request' } }));
          return;
        case 'server_error':
          res.writeHead(500, json).end(JSON.stringify({ error: { message: 'upstream exploded' } }));
          return;
        case 'malformed':
          res.writeHead(200, json).end('{"id": "chatcmpl-1", "choices": [ this is not json');
          return;
        case 'slow':
          // Never answers: the client's timeout must end the call.
          return;
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = {
    server,
    get calls() {
      return state.calls;
    },
    get dropped() {
      return state.dropped;
    },
  };
  const { port } = server.address() as AddressInfo;
  return `http://127.0.0.1:${port}/v1`;
}

async function stopEndpoint(): Promise<void> {
  const current = endpoint;
  endpoint = null;
  if (current === null) return;
  current.server.closeAllConnections();
  await new Promise((resolve) => current.server.close(resolve));
}

/** Every line logged, as the JSON pino would write (object fields and `msg`). */
function capturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const make = (bindings: object): Logger => {
    const write = (level: string) => (obj: object, msg?: string) =>
      void lines.push(JSON.stringify({ level, ...bindings, ...obj, msg }));
    return {
      debug: write('debug'),
      info: write('info'),
      warn: write('warn'),
      error: write('error'),
      child: (more) => make({ ...bindings, ...more }),
    };
  };
  return { logger: make({}), lines };
}

/** A local port nothing listens on: a connection to it is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * An agent `expert` on the fake endpoint (timeout 300 ms, one retry after 10 ms; a turn that failed for a transient
 * reason runs twice, 10 ms apart), or at `baseURL`, and a person `me` who asks it a consulting question; resolves
 * with the failure notice `me` received, the channel's end, the log lines and the hub's `turn_failed` audit record.
 */
async function askFailingExpert(behaviour: Behaviour | { readonly baseURL: string }) {
  const baseURL = typeof behaviour === 'string' ? await startEndpoint(behaviour) : behaviour.baseURL;
  const { client } = await kit.open();
  const model = createModel(
    { provider: 'openai-compatible', model: 'test-model', baseURL, apiKey: KEY },
    { timeoutMs: 300, maxRetries: 1, retryDelayMs: 10 },
  );
  const { logger, lines } = capturingLogger();
  const expert = await registerAgent(client, new Agent({ name: 'expert', model }), {
    logger,
    maxTurnAttempts: 2,
    turnRetryBackoffMs: 10,
  });
  const me = await client.registerHuman({ name: 'me' });
  const channel = await me.open({ type: 'consulting', target: 'expert' });
  const asked = await channel.send(PROMPT);
  const notice: Envelope | null = await me.nextEnvelope({
    predicate: (e) => e.event_type === EV_TURN_FAILED,
    timeout: 15_000,
  });
  const closed = await until(async () => {
    const m = await me.getChannel(channel.channelId);
    return m.state === 'closed' ? m : false;
  }, 'the channel to close');
  const [audit] = await until(async () => {
    const { records } = await client.call('readAudit', { kinds: ['turn_failed'] }, { caller: OPERATOR_CALLER });
    return records.length > 0 ? records : undefined;
  }, 'the turn_failed audit record');
  return { notice, closed, lines, expert, asked, audit, calls: endpoint?.calls ?? -1 };
}

/** The model's part of every notice of the expert. */
const EXPERT_MODEL = { provider: 'openai-compatible', model: 'test-model' };

describe('a failed model call is an envelope the people in the channel see', () => {
  it('tells the person that the model rejected the API key, and closes the consulting channel', async () => {
    const { notice, closed, expert, asked, calls, audit } = await askFailingExpert('unauthorized');
    expect(notice?.event_data).toEqual({
      agent_name: 'expert',
      reason: 'the model rejected the API key',
      code: 'model_auth',
      cause: {
        kind: 'http',
        exc_type: 'APICallError',
        status: 401,
        code: 'invalid_api_key',
        message: 'Incorrect API key provided: *** (header: Bearer ***)',
      },
      attempts: 1,
      ...EXPERT_MODEL,
    });
    // The hub's audit record says it too, as scrubbed.
    expect([audit?.exc_type, audit?.exc_message]).toEqual([
      'ModelCallError',
      'the model rejected the API key (401 invalid_api_key: Incorrect API key provided: *** (header: Bearer ***))',
    ]);
    for (const text of [JSON.stringify(notice), JSON.stringify(audit)]) {
      expect(text).not.toContain(KEY.slice(3, 15));
      expect(text).not.toContain('PROMPT-MARKER');
    }
    expect([notice?.sender_id, notice?.causation_id, notice?.envelope_id]).toEqual([
      expert.agentId,
      asked,
      turnFailedEnvelopeId(expert.agentId, asked),
    ]);
    expect(closed.close_reason).toBe('turn_failed');
    expect(calls).toBe(1);
  });

  it('reports HTTP 500 once the retries of the model call and of the turn are spent', async () => {
    const { notice, closed, calls } = await askFailingExpert('server_error');
    expect(notice?.event_data).toEqual({
      agent_name: 'expert',
      reason: 'the model failed with HTTP 500 after 2 attempts',
      code: 'model_unavailable',
      cause: { kind: 'http', exc_type: 'APICallError', status: 500, message: 'upstream exploded' },
      attempts: 2,
      ...EXPERT_MODEL,
    });
    expect(closed.close_reason).toBe('turn_failed');
    // Two runs of the turn, each a call and its one retry.
    expect(calls).toBe(4);
  });

  it('reports malformed output without retrying it', async () => {
    const { notice, calls } = await askFailingExpert('malformed');
    expect(notice?.event_data).toEqual({
      agent_name: 'expert',
      reason: 'the model returned malformed output',
      code: 'model_malformed_output',
      cause: { kind: 'malformed_output', exc_type: 'APICallError', status: 200, message: 'Invalid JSON response' },
      attempts: 1,
      ...EXPERT_MODEL,
    });
    expect(calls).toBe(1);
  });

  it('reports a model that does not answer within timeout_ms', async () => {
    const { notice, closed, calls } = await askFailingExpert('slow');
    expect(notice?.event_data).toEqual({
      agent_name: 'expert',
      reason: 'the model timed out after 0.3 s',
      code: 'model_timeout',
      cause: { kind: 'timeout', exc_type: 'TimeoutError', message: 'no answer within 0.3 s' },
      attempts: 1,
      ...EXPERT_MODEL,
    });
    expect(closed.close_reason).toBe('turn_failed');
    // A timeout is transient: the turn runs twice; the model call itself is not retried.
    expect(calls).toBe(2);
  });

  it('tells the cause of an endpoint that refuses the connection, after the retries', async () => {
    const port = await closedPort();
    const { notice, closed } = await askFailingExpert({ baseURL: `http://127.0.0.1:${port}/v1` });
    expect(notice?.event_data).toEqual({
      agent_name: 'expert',
      reason: 'the model could not be reached after 2 attempts',
      code: 'model_unavailable',
      cause: {
        kind: 'connection',
        exc_type: 'APICallError',
        code: 'ECONNREFUSED',
        message: `ECONNREFUSED 127.0.0.1:${port}`,
      },
      attempts: 2,
      ...EXPERT_MODEL,
    });
    expect(closed.close_reason).toBe('turn_failed');
  });

  it('leaves out a provider message that quotes the request, and the credentials of a base URL', async () => {
    const echoed = await askFailingExpert('echo');
    expect(echoed.notice?.event_data['cause']).toEqual({
      kind: 'http',
      exc_type: 'APICallError',
      status: 400,
      code: 'bad_request',
    });
    await kit.closeAll();
    // The HTTP client refuses a URL with credentials, and its error quotes the URL.
    const port = await closedPort();
    const { notice, audit, lines } = await askFailingExpert({
      baseURL: `http://admin:hunter2-url-password@127.0.0.1:${port}/v1`,
    });
    expect(notice?.event_data).toMatchObject({
      reason: 'the model call failed (TypeError)',
      code: 'model_error',
      cause: {
        kind: 'error',
        exc_type: 'TypeError',
        message: `Request cannot be constructed from a URL that includes credentials: http://***@127.0.0.1:${port}/v1/chat/completions`,
      },
    });
    for (const text of [JSON.stringify(notice), JSON.stringify(audit), ...lines]) {
      expect(text).not.toContain('hunter2');
      expect(text).not.toContain('admin');
    }
  });

  it('logs the failure on one short line naming the agent, channel and cause, without the prompt or the key', async () => {
    const { lines, closed } = await askFailingExpert('unauthorized');
    const failed = lines.filter((l) => l.includes('"turn failed"'));
    expect(failed).toHaveLength(1);
    expect(JSON.parse(failed[0] ?? '{}')).toMatchObject({
      level: 'error',
      agent: 'expert',
      channel: 'consulting',
      channelId: closed.channel_id,
      code: 'model_auth',
      reason: 'the model rejected the API key',
      cause: { kind: 'http', status: 401, code: 'invalid_api_key' },
      attempts: 1,
      provider: 'openai-compatible',
      model: 'test-model',
      msg: 'turn failed',
    });
    for (const line of lines) {
      expect(line.length).toBeLessThan(600);
      expect(line).not.toContain('PROMPT-MARKER');
      expect(line).not.toContain(KEY);
    }
  });

  it('stops the model call when the turn is cancelled, and posts no failure notice', async () => {
    const baseURL = await startEndpoint('slow');
    const { client } = await kit.open();
    const model = createModel({ provider: 'openai-compatible', model: 'test-model', baseURL, apiKey: KEY });
    const handler = createDefaultHandler(new Agent({ name: 'expert', model }));
    // The registered handler only accepts the invite: the test runs the default handler's turn itself.
    const expert = await client.register(
      { name: 'expert' },
      {
        handler: async (e, self) => {
          if (isInviteFor(self, e)) await ackInvite(self, e);
        },
      },
    );
    const me = await client.registerHuman({ name: 'me' });
    const channel = await me.open({ type: 'conversation', target: 'expert' });
    const asked = await channel.send('Are you there?');
    const trigger = await until(
      async () => (await expert.readWal(channel.channelId)).find((e) => e.envelope_id === asked),
      'the trigger',
    );
    const cancel = new AbortController();
    const turn = handler(trigger, expert, { signal: cancel.signal });
    await until(() => endpoint?.calls === 1, 'the model call');
    cancel.abort(new Error('turn cancelled'));
    await turn;
    await until(() => endpoint?.dropped === 1, 'the endpoint to see the call dropped');
    const log = await me.readWal(channel.channelId);
    expect(log.filter((e) => e.event_type === EV_TURN_FAILED)).toEqual([]);
    expect(endpoint?.calls).toBe(1);
  });
});

describe('the passport says which model answers', () => {
  it('registers an agent on the scripted model and one on a real model with their provider and model', async () => {
    const { client } = await kit.open();
    const offline = await registerAgent(
      client,
      new Agent({ name: 'offline', model: createScriptedModel(['Canned.'], { loop: true }) }),
    );
    const real = await registerAgent(
      client,
      new Agent({
        name: 'real',
        model: createModel({ provider: 'openai-compatible', model: 'llama3.2', baseURL: 'http://127.0.0.1:1/v1' }),
      }),
    );
    // As anyone reads them from the hub's directory.
    const stored = await Promise.all([offline, real].map((a) => client.getAgent(a.agentId)));
    expect(stored.map((p) => [p.name, p.provider, p.model])).toEqual([
      ['offline', 'scripted', 'scripted'],
      ['real', 'openai-compatible', 'llama3.2'],
    ]);
  });
});
