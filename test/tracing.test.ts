import { Agent, createScriptedModel, registerAgent, type TurnOutcome } from '@ag2net/agent';
import { HubClient } from '@ag2net/client';
import { startHub } from '@ag2net/hub';
import { traceAnchorOf } from '@ag2net/protocol/internal';
import { EV_TEXT } from '@ag2net/protocol';
import { startTracing, type Tracing } from '@ag2net/telemetry';
import { natsPerFile, uniqueName, waitFor } from '@ag2net/test-support';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const nats = natsPerFile();
const exporter = new InMemorySpanExporter();
let tracing: Tracing | null = null;

beforeAll(() => {
  tracing = startTracing({ serviceName: 'ag2net-test', exporter, env: {} });
});
afterAll(async () => {
  await tracing?.shutdown();
});

/** Each span as `scope name`, trace id, and what the test checks. */
function view(span: ReadableSpan) {
  return {
    scope: span.instrumentationScope.name,
    name: span.name,
    traceId: span.spanContext().traceId,
    spanId: span.spanContext().spanId,
    parentSpanId: span.parentSpanContext?.spanId ?? null,
    attributes: span.attributes,
  };
}

describe('tracing', () => {
  it('follows one conversation from the client through the hub to the agent turn and its reply under one trace id', async () => {
    const prefix = uniqueName('trace');
    // The hub, the agent and the person each have a connection of their own, as they would as processes.
    await using hub = await startHub({ servers: nats.url, prefix, sweepIntervalMs: 0 });
    const agentSide = await HubClient.connect({ servers: nats.url, prefix });
    const personSide = await HubClient.connect({ servers: nats.url, prefix });
    try {
      const turns: TurnOutcome[] = [];
      const expert = new Agent({ name: 'expert', model: createScriptedModel(['A log keeps order.']) });
      const expertClient = await registerAgent(agentSide, expert, { observer: { turnFinished: (t) => turns.push(t) } });
      const me = await personSide.registerHuman({ name: 'me' });
      const channel = await me.open({ type: 'consulting', target: 'expert' });
      exporter.reset();

      await channel.send('what does a log keep?');
      const reply = await me.nextEnvelope({
        predicate: (e) => e.event_type === EV_TEXT && e.sender_id === expertClient.agentId,
        timeout: 15_000,
      });
      const question = (await me.readWal(channel.channelId)).find(
        (e) => e.event_type === EV_TEXT && e.sender_id === me.agentId,
      );
      expect(hub.role).toBe('active');

      // The question got a W3C trace id at send, and the agent's reply carries the same one.
      const traceId = question?.trace_id ?? '';
      expect(traceAnchorOf(traceId)?.traceId).toBe(traceId);
      expect(reply?.trace_id).toBe(traceId);

      // The reply reaches the person before the agent's side has necessarily ended its spans (its send ends when the
      // hub's ack comes back, its turn after that): wait for both sends and the turn to be finished.
      const finished = (name: string): number =>
        exporter.getFinishedSpans().filter((s) => s.name === name && s.spanContext().traceId === traceId).length;
      await waitFor(() => finished('ag2net.send') >= 2 && finished('ag2net.turn') >= 1, {
        timeoutMs: 10_000,
        what: "the agent's send and turn spans to end",
      });
      const spans = exporter.getFinishedSpans().map(view);
      const inTrace = spans.filter((s) => s.traceId === traceId);
      const named = (scope: string, name: string) => inTrace.filter((s) => s.scope === scope && s.name === name);
      // The client's send, the hub's RPC handling, admission and delivery, the agent's turn and its reply's send.
      expect(named('@ag2net/client', 'ag2net.send')).toHaveLength(2);
      expect(named('@ag2net/hub', 'ag2net.rpc post')).toHaveLength(2);
      expect(named('@ag2net/hub', 'ag2net.admit')).toHaveLength(2);
      expect(named('@ag2net/hub', 'ag2net.deliver').length).toBeGreaterThanOrEqual(2);
      const [turn, ...moreTurns] = named('@ag2net/agent', 'ag2net.turn');
      expect(moreTurns).toEqual([]);
      expect(turn?.attributes).toMatchObject({
        'ag2net.agent': 'expert',
        'ag2net.channel_id': channel.channelId,
        'ag2net.trigger_id': question?.envelope_id,
        'ag2net.turn_result': 'answered',
        'ag2net.channel_type': 'consulting',
      });
      // The reply is sent inside the turn: its send span is the turn's child.
      const replySend = named('@ag2net/client', 'ag2net.send').find(
        (s) => s.attributes['ag2net.envelope_id'] === reply?.envelope_id,
      );
      expect(replySend?.parentSpanId).toBe(turn?.spanId);
      // Admission happens inside the RPC handling span.
      const admits = named('@ag2net/hub', 'ag2net.admit');
      const rpcIds = named('@ag2net/hub', 'ag2net.rpc post').map((s) => s.spanId);
      expect(admits.map((s) => rpcIds.includes(s.parentSpanId ?? ''))).toEqual([true, true]);
      expect(turns.map((t) => [t.agent, t.channelId, t.channelType, t.result, t.code])).toEqual([
        ['expert', channel.channelId, 'consulting', 'answered', null],
      ]);
      expect(turns[0]?.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
    } finally {
      await personSide.close();
      await agentSide.close();
    }
  }, 30_000);

  it('keeps a trace id the sender chose', async () => {
    const prefix = uniqueName('trace');
    await using _hub = await startHub({ servers: nats.url, prefix, sweepIntervalMs: 0 });
    const side = await HubClient.connect({ servers: nats.url, prefix });
    try {
      const a = await side.registerHuman({ name: 'a' });
      await side.registerHuman({ name: 'b' });
      const channel = await a.open({ type: 'conversation', target: 'b' });
      const chosen = '4bf92f3577b34da6a3ce929d0e0e4736';
      exporter.reset();
      const ack = await a.sendEnvelope({
        channel_id: channel.channelId,
        event_type: EV_TEXT,
        event_data: { text: 'hi' },
        trace_id: chosen,
      });
      const stored = (await a.readWal(channel.channelId)).find((e) => e.envelope_id === ack.envelope_id);
      expect(stored?.trace_id).toBe(chosen);
      const send = exporter
        .getFinishedSpans()
        .map(view)
        // This post's send span (a person's automatic invite ack may finish a send span after the reset too).
        .find((s) => s.name === 'ag2net.send' && s.attributes['ag2net.envelope_id'] === ack.envelope_id);
      // Under the trace's anchor: the parent every process uses for this trace id.
      expect([send?.traceId, send?.parentSpanId]).toEqual([chosen, 'a3ce929d0e0e4736']);
    } finally {
      await side.close();
    }
  }, 30_000);
});
