import { describe, expect, it } from 'vitest';
import { EnvelopeSchema, type Envelope } from '../api-types.js';
import { causeLine, turnDuration, turnsOf } from './turns.js';

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
      model: 'gpt-4o-mini',
    });
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
      model: null,
    });
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
