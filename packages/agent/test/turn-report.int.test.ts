import { sequence } from '@ag2net/adapters';
import { EV_PACKET, EV_TEXT, TurnReportSchema, type Envelope, type TurnReport } from '@ag2net/protocol';
import { startModelEndpoint, turnReportFixture } from '@ag2net/test-support';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Agent, createModel, createScriptedModel, registerAgent, toolCall } from '../src/index.js';
import { netKit, until } from './support.js';

const kit = netKit();
beforeAll(() => kit.start());
afterEach(() => kit.closeAll());
afterAll(() => kit.stop());

/** The report an answer carries, checked against the schema the hub admitted it by. */
function reportOf(answer: Envelope | undefined): TurnReport {
  return TurnReportSchema.parse(answer?.event_data['turn']);
}

/** What of a report does not depend on the clock. */
function withoutTiming(report: TurnReport): Omit<TurnReport, 'started_at' | 'duration_ms'> {
  const { started_at: _at, duration_ms: _ms, ...rest } = report;
  return rest;
}

/** What a report of a scripted model's turn says besides its timing: no tokens, no retry. */
function scriptedTurn(counts: {
  attempts: number;
  tool_calls: number;
}): Omit<TurnReport, 'started_at' | 'duration_ms'> {
  const usage = { input_tokens: 0, output_tokens: 0 };
  return withoutTiming(turnReportFixture({ provider: 'scripted', model: 'scripted', usage, retries: 0, ...counts }));
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
    expect(withoutTiming(report)).toStrictEqual(scriptedTurn({ attempts: 2, tool_calls: 1 }));
    // The turn began once the question was admitted, and before the answer was.
    const started = Date.parse(report.started_at);
    expect(started).toBeGreaterThanOrEqual(Date.parse(question?.created_at ?? ''));
    expect(started).toBeLessThanOrEqual(Date.parse(answer?.created_at ?? ''));
    expect(Object.keys(answer?.event_data ?? {}).sort()).toEqual(['text', 'turn']);
  });

  it("counts the model's retry of a transient failure and the tokens the endpoint reported", async () => {
    const { client } = await kit.open();
    const alice = await client.registerHuman({ name: 'alice' });
    await using endpoint = await startModelEndpoint({ content: 'Durable first.' });
    const model = createModel(
      { provider: 'openai-compatible', model: 'fake-1', baseURL: endpoint.baseURL },
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
    expect(withoutTiming(reportOf(answer))).toStrictEqual(
      withoutTiming(turnReportFixture({ provider: 'openai-compatible', model: 'fake-1' })),
    );
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
    expect(withoutTiming(reportOf(packet))).toStrictEqual(scriptedTurn({ attempts: 1, tool_calls: 0 }));
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
