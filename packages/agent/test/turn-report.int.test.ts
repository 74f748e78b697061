import { sequence } from '@ag2net/adapters';
import { EV_PACKET, EV_TEXT, TurnReportSchema, type Envelope, type TurnReport } from '@ag2net/protocol';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Agent, createModel, createScriptedModel, registerAgent, toolCall } from '../src/index.js';
import { netKit, until } from './support.js';

const kit = netKit();
beforeAll(() => kit.start());
afterEach(async () => {
  await kit.closeAll();
  const server = endpoint;
  endpoint = null;
  if (server === null) return;
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
afterAll(() => kit.stop());

let endpoint: Server | null = null;

/**
 * A fake OpenAI-compatible endpoint: the first call fails with 503 (a transient failure the model retries), the next
 * answers with a completion of 312 prompt and 54 completion tokens.
 */
async function flakyEndpoint(): Promise<string> {
  let calls = 0;
  endpoint = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      calls += 1;
      const json = { 'content-type': 'application/json' };
      if (calls === 1) {
        res.writeHead(503, json).end(JSON.stringify({ error: { message: 'overloaded' } }));
        return;
      }
      res.writeHead(200, json).end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1767225600,
          model: 'fake-1',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Durable first.' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 312, completion_tokens: 54, total_tokens: 366 },
        }),
      );
    });
  });
  const server = endpoint;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return `http://127.0.0.1:${port}/v1`;
}

/** The report an answer carries, checked against the schema the hub admitted it by. */
function reportOf(answer: Envelope | undefined): TurnReport {
  return TurnReportSchema.parse(answer?.event_data['turn']);
}

/** What of a report does not depend on the clock. */
function withoutTiming(report: TurnReport): Omit<TurnReport, 'started_at' | 'duration_ms'> {
  const { started_at: _at, duration_ms: _ms, ...rest } = report;
  return rest;
}

describe('turn report', () => {
  it("rides in a scripted agent's answer: the scripted model, its zero tokens, a model call per step and the tool call", async () => {
    const { client } = await kit.open();
    const alice = await client.registerHuman({ name: 'alice' });
    const model = createScriptedModel([toolCall('peers'), 'Bob here.']);
    const bob = await registerAgent(client, new Agent({ name: 'bob', model }));
    const channel = await alice.open({ type: 'consulting', target: 'bob' });
    const asked = await channel.send('Who is around?', { audience: [bob.agentId] });

    await alice.waitForChannelEvent(channel.channelId, { timeout: 15_000 });
    const log = await alice.readWal(channel.channelId);
    const question = log.find((e) => e.envelope_id === asked);
    const answer = log.find((e) => e.sender_id === bob.agentId && e.event_type === EV_TEXT);
    expect(answer?.event_data['text']).toBe('Bob here.');
    const report = reportOf(answer);
    expect(withoutTiming(report)).toStrictEqual({
      provider: 'scripted',
      model: 'scripted',
      usage: { input_tokens: 0, output_tokens: 0 },
      attempts: 2,
      retries: 0,
      tool_calls: 1,
    });
    // The turn began once the question was admitted, and before the answer was.
    const started = Date.parse(report.started_at);
    expect(started).toBeGreaterThanOrEqual(Date.parse(question?.created_at ?? ''));
    expect(started).toBeLessThanOrEqual(Date.parse(answer?.created_at ?? ''));
    expect(Object.keys(answer?.event_data ?? {}).sort()).toEqual(['text', 'turn']);
  });

  it("counts the model's retry of a transient failure and the tokens the endpoint reported", async () => {
    const { client } = await kit.open();
    const alice = await client.registerHuman({ name: 'alice' });
    const model = createModel(
      { provider: 'openai-compatible', model: 'fake-1', baseURL: await flakyEndpoint() },
      { retryDelayMs: 1 },
    );
    const expert = await registerAgent(client, new Agent({ name: 'expert', model }));
    const channel = await alice.open({ type: 'consulting', target: 'expert' });
    await channel.send('What does a write-ahead log guarantee?', { audience: [expert.agentId] });

    await alice.waitForChannelEvent(channel.channelId, { timeout: 15_000 });
    const answer = (await alice.readWal(channel.channelId)).find(
      (e) => e.sender_id === expert.agentId && e.event_type === EV_TEXT,
    );
    expect([answer?.event_type, answer?.event_data['text']]).toEqual([EV_TEXT, 'Durable first.']);
    expect(withoutTiming(reportOf(answer))).toStrictEqual({
      provider: 'openai-compatible',
      model: 'fake-1',
      usage: { input_tokens: 312, output_tokens: 54 },
      attempts: 2,
      retries: 1,
      tool_calls: 0,
    });
  });

  it("rides in a workflow's packet beside its routing", async () => {
    const { client } = await kit.open();
    const alice = await client.registerHuman({ name: 'alice' });
    const writer = await registerAgent(client, new Agent({ name: 'writer', model: createScriptedModel(['Draft.']) }));
    const graph = sequence(['alice', 'writer']).toDict();
    const channel = await alice.open({ type: 'workflow', target: 'writer', knobs: { graph } });
    await channel.send('Write it.');

    const packet = await until(
      async () =>
        (await alice.readWal(channel.channelId)).find(
          (e) => e.sender_id === writer.agentId && e.event_type === EV_PACKET,
        ),
      "the writer's packet",
    );
    expect([packet.event_data['body'], packet.event_data['routing']]).toEqual(['Draft.', { kind: 'text' }]);
    expect(withoutTiming(reportOf(packet))).toStrictEqual({
      provider: 'scripted',
      model: 'scripted',
      usage: { input_tokens: 0, output_tokens: 0 },
      attempts: 1,
      retries: 0,
      tool_calls: 0,
    });
  });

  it('is left out when the handler is told not to report turns', async () => {
    const { client } = await kit.open();
    const alice = await client.registerHuman({ name: 'alice' });
    const agent = new Agent({ name: 'bob', model: createScriptedModel(['Quiet answer.']) });
    const bob = await registerAgent(client, agent, { turnReport: false });
    const channel = await alice.open({ type: 'consulting', target: 'bob' });
    await channel.send('Anyone?', { audience: [bob.agentId] });

    await alice.waitForChannelEvent(channel.channelId, { timeout: 15_000 });
    const answer = (await alice.readWal(channel.channelId)).find(
      (e) => e.sender_id === bob.agentId && e.event_type === EV_TEXT,
    );
    expect(answer?.event_data).toStrictEqual({ text: 'Quiet answer.' });
  });
});
