import { EV_TEXT, EV_TURN_FAILED, type Envelope } from '@ag2net/protocol';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Agent, createModel, registerAgent } from '../src/index.js';
import { netKit, until } from './support.js';

// The turn-failure policy end to end: the default handler throws what a turn met, and the agent's client runs a
// transient failure again or reports a permanent one (or the last of its attempts) once as ag2.turn.failed.

const kit = netKit();
beforeAll(() => kit.start());
afterEach(async () => {
  await kit.closeAll();
  await new Promise((resolve) => endpoint?.close(resolve));
  endpoint = null;
});
afterAll(() => kit.stop());

let endpoint: Server | null = null;

const ANSWER = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1767225600,
  model: 'test-model',
  choices: [{ index: 0, message: { role: 'assistant', content: 'A WAL survives a crash.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
};

/** One answer of the fake endpoint: an HTTP status and a JSON body. */
type Reply = readonly [status: number, body: object];

/**
 * A fake OpenAI-compatible endpoint answering its calls in turn with `replies`, the last one for every further call;
 * resolves with its base URL and the number of calls so far.
 */
async function startEndpoint(replies: readonly Reply[]): Promise<{ baseURL: string; calls: () => number }> {
  let calls = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const [status, body] = replies[Math.min(calls, replies.length - 1)] ?? [500, {}];
      calls += 1;
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = server;
  const { port } = server.address() as AddressInfo;
  return { baseURL: `http://127.0.0.1:${port}/v1`, calls: () => calls };
}

/**
 * An agent `expert` on the endpoint (no retries of its own model calls, so each failed call fails the turn's attempt;
 * three attempts, 20 ms apart) and a person `me` who asks it a consulting question; resolves once the channel closed,
 * with everything the channel's log holds.
 */
async function ask(baseURL: string): Promise<{ log: Envelope[]; expertId: string; asked: string }> {
  const { client } = await kit.open();
  const model = createModel(
    { provider: 'openai-compatible', model: 'test-model', baseURL, apiKey: 'sk-test' },
    { maxRetries: 0, timeoutMs: 5_000 },
  );
  const expert = await registerAgent(client, new Agent({ name: 'expert', model }), {
    maxTurnAttempts: 3,
    turnRetryBackoffMs: 20,
  });
  const me = await client.registerHuman({ name: 'me' });
  const channel = await me.open({ type: 'consulting', target: 'expert' });
  const asked = await channel.send('What does a write-ahead log guarantee?');
  await until(async () => (await me.getChannel(channel.channelId)).state === 'closed', 'the channel to close');
  return { log: await me.readWal(channel.channelId), expertId: expert.agentId, asked };
}

const of = (log: readonly Envelope[], type: string, sender: string) =>
  log.filter((e) => e.event_type === type && e.sender_id === sender);

describe('one turn-failure policy, from the default handler to the client', () => {
  it('runs again a turn whose model was unavailable once, and answers once', async () => {
    const { baseURL, calls } = await startEndpoint([
      [503, { error: { message: 'overloaded' } }],
      [200, ANSWER],
    ]);
    const { log, expertId, asked } = await ask(baseURL);
    expect(of(log, EV_TEXT, expertId).map((e) => [e.event_data['text'], e.causation_id])).toEqual([
      ['A WAL survives a crash.', asked],
    ]);
    expect(of(log, EV_TURN_FAILED, expertId)).toEqual([]);
    expect(calls()).toBe(2);
  });

  it('runs again a turn the provider rate limited, and answers once', async () => {
    const { baseURL, calls } = await startEndpoint([
      [429, { error: { message: 'slow down' } }],
      [200, ANSWER],
    ]);
    const { log, expertId } = await ask(baseURL);
    expect(of(log, EV_TEXT, expertId)).toHaveLength(1);
    expect(of(log, EV_TURN_FAILED, expertId)).toEqual([]);
    expect(calls()).toBe(2);
  });

  it('posts one ag2.turn.failed with its cause, at once, for a model that rejects the key', async () => {
    const { baseURL, calls } = await startEndpoint([
      [401, { error: { message: 'Incorrect API key provided', code: 'invalid_api_key' } }],
    ]);
    const { log, expertId, asked } = await ask(baseURL);
    const failed = of(log, EV_TURN_FAILED, expertId);
    expect(failed.map((e) => [e.causation_id, e.event_data['code'], e.event_data['cause']])).toEqual([
      [
        asked,
        'model_auth',
        {
          kind: 'http',
          exc_type: 'APICallError',
          status: 401,
          code: 'invalid_api_key',
          message: 'Incorrect API key provided',
        },
      ],
    ]);
    expect(of(log, EV_TEXT, expertId)).toEqual([]);
    expect(calls()).toBe(1);
  });

  it('posts one ag2.turn.failed with its cause after the last attempt, for a model that stays unavailable', async () => {
    const { baseURL, calls } = await startEndpoint([[500, { error: { message: 'upstream exploded' } }]]);
    const { log, expertId, asked } = await ask(baseURL);
    const failed = of(log, EV_TURN_FAILED, expertId);
    expect(failed.map((e) => [e.causation_id, e.event_data['code'], e.event_data['cause']])).toEqual([
      [
        asked,
        'model_unavailable',
        { kind: 'http', exc_type: 'APICallError', status: 500, message: 'upstream exploded' },
      ],
    ]);
    expect(of(log, EV_TEXT, expertId)).toEqual([]);
    expect(calls()).toBe(3);
  });
});
