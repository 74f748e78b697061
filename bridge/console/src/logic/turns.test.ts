import { describe, expect, it } from 'vitest';
import { EnvelopeSchema, type Envelope } from '@ag2net/protocol';
import {
  causeLine,
  failureDetail,
  isScripted,
  modelLabel,
  reportOf,
  tokensLabel,
  turnAttempts,
  turnDuration,
  turnModel,
  turnTime,
  turnsOf,
} from './turns.js';

const T0 = Date.parse('2026-01-01T12:00:00.000Z');

function envelope(
  sequence: number,
  ms: number,
  fields: { event_type: string; sender_id: string; event_data?: Record<string, unknown>; causation_id?: string },
): Envelope {
  return EnvelopeSchema.parse({
    channel_id: 'c1',
    envelope_id: `e${sequence}`,
    created_at: new Date(T0 + ms).toISOString(),
    sequence,
    ...fields,
  });
}

const log = [
  envelope(1, 0, { event_type: 'ag2.channel.invite', sender_id: 'me' }),
  envelope(2, 200, { event_type: 'ag2.channel.opened', sender_id: 'me' }),
  envelope(3, 5_200, { event_type: 'ag2.msg.text', sender_id: 'me', event_data: { text: 'help' } }),
  envelope(4, 7_450, {
    event_type: 'ag2.packet',
    sender_id: 'tr',
    causation_id: 'e3',
    event_data: { routing: { kind: 'handoff', tool: 'transfer_to_billing' }, body: 'over to billing' },
  }),
  envelope(5, 9_000, {
    event_type: 'ag2.turn.failed',
    sender_id: 'bi',
    causation_id: 'e4',
    event_data: {
      agent_name: 'billing',
      reason: 'the model timed out',
      code: 'model_timeout',
      attempts: 3,
      model: 'gpt-4o-mini',
      cause: { kind: 'timeout', message: 'no answer in 30 s' },
    },
  }),
];

describe('turnsOf', () => {
  it('times each turn from its trigger to its answer, by causation, else from the message or opening before it', () => {
    const rows = turnsOf(log, null);
    expect(rows.map((r) => [r.speakerId, r.trigger?.label, r.outcome, r.tool, turnDuration(r, 0)])).toEqual([
      ['me', 'channel opened', 'answered', null, 5_000],
      ['tr', '#3', 'handoff', 'transfer_to_billing', 2_250],
      ['bi', '#4', 'failed', null, 1_550],
    ]);
    expect(rows[2]?.failure).toEqual({
      code: 'model_timeout',
      reason: 'the model timed out',
      cause: 'timeout: no answer in 30 s',
      attempts: 3,
      provider: null,
      model: 'gpt-4o-mini',
    });
    expect(rows.map((r) => r.report)).toEqual([null, null, null]);
  });

  it('adds the speaker whose turn it is, waiting since the last message', () => {
    const rows = turnsOf(log.slice(0, 3), 'tr');
    const waiting = rows.at(-1);
    expect([waiting?.key, waiting?.speakerId, waiting?.outcome, waiting?.trigger?.label]).toEqual([
      'waiting',
      'tr',
      'waiting',
      '#3',
    ]);
    expect(waiting === undefined ? null : turnDuration(waiting, T0 + 6_200)).toBe(1_000);
  });

  it('reads a failure without the optional fields as not known', () => {
    const bare = envelope(6, 100, {
      event_type: 'ag2.turn.failed',
      sender_id: 'bi',
      event_data: { agent_name: 'billing', reason: 'x', code: 'turn_error', attempts: 0 },
    });
    expect(turnsOf([bare], null)[0]?.failure).toEqual({
      code: 'turn_error',
      reason: 'x',
      cause: null,
      attempts: null,
      provider: null,
      model: null,
    });
  });
});

const REPORT = {
  started_at: '2026-01-01T12:00:05.300Z',
  duration_ms: 1_840,
  provider: 'openai',
  model: 'gpt-4.1-mini',
  usage: { input_tokens: 1_312, output_tokens: 54 },
  attempts: 3,
  retries: 1,
  tool_calls: 1,
};

describe('turn reports', () => {
  const answered = envelope(4, 7_450, {
    event_type: 'ag2.msg.text',
    sender_id: 'ex',
    causation_id: 'e3',
    event_data: { text: 'here', turn: REPORT },
  });

  it("read an answer's report: the agent's start and duration, model, tokens, attempts, retries and tool calls", () => {
    expect(reportOf(answered)).toEqual({
      startedAt: T0 + 5_300,
      durationMs: 1_840,
      provider: 'openai',
      model: 'gpt-4.1-mini',
      usage: { input: 1_312, output: 54 },
      attempts: 3,
      retries: 1,
      toolCalls: 1,
    });
  });

  it("take the turn's duration, model and attempts from the report, and the hub's times otherwise", () => {
    const [asked, answer] = turnsOf([...log.slice(0, 3), answered], null);
    if (asked === undefined || answer === undefined) throw new Error('two turns expected');
    expect(turnTime(answer, 0)).toEqual({ ms: 1_840, source: 'agent' });
    expect(turnDuration(answer, 0)).toBe(2_250);
    expect(turnModel(answer)).toEqual({ provider: 'openai', model: 'gpt-4.1-mini' });
    expect(turnAttempts(answer)).toEqual({ attempts: 3, retries: 1 });
    expect(turnTime(asked, 0)).toEqual({ ms: 5_000, source: 'hub' });
    expect([turnModel(asked), turnAttempts(asked)]).toEqual([null, null]);
  });

  it("take a failure's model and its failed call's retries", () => {
    const failed = turnsOf(log, null)[2];
    if (failed === undefined) throw new Error('a failed turn expected');
    expect(turnModel(failed)).toEqual({ provider: null, model: 'gpt-4o-mini' });
    expect(turnAttempts(failed)).toEqual({ attempts: 3, retries: 2 });
  });

  it("leave out a report the protocol's TurnReportSchema refuses, and keep one without the optional counts", () => {
    const bad = (turn: unknown) => reportOf({ event_data: { text: 'x', turn } });
    expect(bad('fast')).toBeNull();
    expect(bad({ ...REPORT, duration_ms: -5 })).toBeNull();
    expect(bad({ ...REPORT, model: '' })).toBeNull();
    expect(bad({ ...REPORT, attempts: 0 })).toBeNull();
    expect(bad({ ...REPORT, started_at: 'yesterday' })).toBeNull();
    const { usage: _u, retries: _r, tool_calls: _t, ...minimal } = REPORT;
    expect(bad(minimal)).toEqual({
      startedAt: Date.parse(REPORT.started_at),
      durationMs: 1_840,
      provider: 'openai',
      model: 'gpt-4.1-mini',
      usage: null,
      attempts: 3,
      retries: null,
      toolCalls: null,
    });
  });
});

describe('labels', () => {
  it('name a model by provider and id, once when they are the same', () => {
    expect(modelLabel('openai', 'gpt-4.1-mini')).toBe('openai / gpt-4.1-mini');
    expect(modelLabel(null, 'gpt-4o-mini')).toBe('gpt-4o-mini');
    expect(modelLabel('scripted', 'scripted')).toBe('scripted');
    expect(modelLabel('anthropic', null)).toBe('anthropic');
    expect(modelLabel(null, null)).toBeNull();
    expect([isScripted('scripted'), isScripted('openai'), isScripted(null)]).toEqual([true, false, false]);
  });

  it("say a failure's attempts and model, the attempts once", () => {
    const failure = { code: 'model_timeout', reason: 'the model timed out', cause: null, provider: null };
    expect(failureDetail({ ...failure, attempts: 3, model: 'gpt-4o-mini' })).toBe('after 3 attempts · gpt-4o-mini');
    expect(failureDetail({ ...failure, attempts: 1, provider: 'openai', model: 'gpt-4.1-mini' })).toBe(
      'after 1 attempt · openai / gpt-4.1-mini',
    );
    const unreachable = { ...failure, reason: 'the model could not be reached after 3 attempts', attempts: 3 };
    expect(failureDetail({ ...unreachable, provider: 'openai-compatible', model: 'local-1' })).toBe(
      'openai-compatible / local-1',
    );
    expect(failureDetail({ ...failure, attempts: null, model: null })).toBe('');
  });

  it('say tokens in and out with thousands separated', () => {
    expect(tokensLabel({ input: 1_312, output: 54 })).toBe('1,312 → 54');
    expect(tokensLabel({ input: 0, output: 0 })).toBe('0 → 0');
  });
});

describe('causeLine', () => {
  it('says a cause in one line: text as is, an object by kind, then status, code and message', () => {
    expect(causeLine('rate limited')).toBe('rate limited');
    expect(causeLine({ type: 'APICallError', message: '429' })).toBe('APICallError: 429');
    expect(
      causeLine({
        kind: 'http',
        exc_type: 'APICallError',
        status: 401,
        code: 'invalid_api_key',
        message: 'Incorrect API key provided: ***',
      }),
    ).toBe('http: 401 invalid_api_key: Incorrect API key provided: ***');
    expect(causeLine({ kind: 'connection', code: 'ECONNREFUSED', message: 'ECONNREFUSED 127.0.0.1:9' })).toBe(
      'connection: ECONNREFUSED 127.0.0.1:9',
    );
    expect(causeLine({ code: 'model_auth' })).toBe('model_auth');
    expect(causeLine({})).toBeNull();
    expect(causeLine(42)).toBeNull();
  });
});
