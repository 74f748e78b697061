import { ackInvite, isInviteFor, type Logger } from '@ag2net/client';
import { EV_TURN_FAILED, type Envelope } from '@ag2net/protocol';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Agent, createDefaultHandler, createModel, registerAgent, turnFailedEnvelopeId } from '../src/index.js';
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
type Behaviour = 'unauthorized' | 'server_error' | 'malformed' | 'slow';

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
          res.writeHead(401, json).end(JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}` } }));
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
  const write = (level: string) => (obj: object, msg?: string) =>
    void lines.push(JSON.stringify({ level, ...obj, msg }));
  return { logger: { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') }, lines };
}

/**
 * An agent `expert` on the fake endpoint (timeout 300 ms, one retry after 10 ms) and a person `me` who asks it a
 * consulting question; resolves with the failure notice `me` received, the channel's end and the log lines.
 */
async function askFailingExpert(behaviour: Behaviour) {
  const baseURL = await startEndpoint(behaviour);
  const { client } = await kit.open();
  const model = createModel(
    { provider: 'openai-compatible', model: 'test-model', baseURL, apiKey: KEY },
    { timeoutMs: 300, maxRetries: 1, retryDelayMs: 10 },
  );
  const { logger, lines } = capturingLogger();
  const expert = await registerAgent(client, new Agent({ name: 'expert', model }), { logger });
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
  return { notice, closed, lines, expert, asked, calls: endpoint?.calls ?? -1 };
}

describe('a failed model call is an envelope the people in the channel see', () => {
  it('tells the person that the model rejected the API key, and closes the consulting channel', async () => {
    const { notice, closed, expert, asked, calls } = await askFailingExpert('unauthorized');
    expect(notice?.event_data).toEqual({
      agent_name: 'expert',
      reason: 'the model rejected the API key',
      code: 'model_auth',
    });
    expect([notice?.sender_id, notice?.causation_id, notice?.envelope_id]).toEqual([
      expert.agentId,
      asked,
      turnFailedEnvelopeId(expert.agentId, asked),
    ]);
    expect(closed.close_reason).toBe('turn_failed');
    expect(calls).toBe(1);
  });

  it('reports HTTP 500 once the retries are spent', async () => {
    const { notice, closed, calls } = await askFailingExpert('server_error');
    expect(notice?.event_data).toEqual({
      agent_name: 'expert',
      reason: 'the model failed with HTTP 500 after 2 attempts',
      code: 'model_unavailable',
    });
    expect(closed.close_reason).toBe('turn_failed');
    expect(calls).toBe(2);
  });

  it('reports malformed output without retrying it', async () => {
    const { notice, calls } = await askFailingExpert('malformed');
    expect(notice?.event_data).toEqual({
      agent_name: 'expert',
      reason: 'the model returned malformed output',
      code: 'model_malformed_output',
    });
    expect(calls).toBe(1);
  });

  it('reports a model that does not answer within timeout_ms', async () => {
    const { notice, closed, calls } = await askFailingExpert('slow');
    expect(notice?.event_data).toEqual({
      agent_name: 'expert',
      reason: 'the model timed out after 0.3 s',
      code: 'model_timeout',
    });
    expect(closed.close_reason).toBe('turn_failed');
    expect(calls).toBe(1);
  });

  it('logs the failure on one short line naming the agent and channel, without the prompt or the key', async () => {
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
      msg: 'turn failed',
    });
    for (const line of lines) {
      expect(line.length).toBeLessThan(400);
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
