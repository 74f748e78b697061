import { EnvelopeSchema, PassportSchema, type Envelope } from '@ag2net/protocol';
import { turnReportFixture } from '@ag2net/test-support';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Output } from './output.js';
import { NameBook, durationText, envelopePrinter, printEnvelope, turnFailedText, turnSuffix } from './render.js';

const NAMES: Readonly<Record<string, string>> = { A1: 'ann', E1: 'expert', B1: 'broken' };
// Not today: listings show the date and the minute.
const AT = '2020-03-02T09:15:06.000Z';

function envelope(sequence: number, fields: Partial<Envelope> & Pick<Envelope, 'event_type' | 'sender_id'>): Envelope {
  return EnvelopeSchema.parse({ channel_id: 'c1', envelope_id: `e${sequence}`, created_at: AT, sequence, ...fields });
}

const REPORT = turnReportFixture();
const answer = envelope(4, {
  event_type: 'ag2.msg.text',
  sender_id: 'E1',
  event_data: { text: 'Durable first.', turn: REPORT },
});
const failure = envelope(5, {
  event_type: 'ag2.turn.failed',
  sender_id: 'B1',
  audience: null,
  event_data: {
    agent_name: 'broken',
    reason: 'the model could not be reached after 3 attempts',
    code: 'model_unavailable',
    cause: { kind: 'connection', exc_type: 'APICallError', code: 'ECONNREFUSED', message: 'ECONNREFUSED 127.0.0.1:9' },
    attempts: 3,
    provider: 'openai-compatible',
    model: 'local-1',
  },
});

/** What `printEnvelope` writes for `envelopes`, without colours (standard output is not a terminal). */
async function printed(envelopes: readonly Envelope[], turns?: boolean): Promise<string[]> {
  let out = '';
  const output = new Output(
    {
      out: (t) => void (out += t),
      err: () => undefined,
      lines: () => Readable.from([]),
      env: {},
      isTty: false,
      signal: new AbortController().signal,
    },
    { json: false },
  );
  const names = new NameBook({
    getAgent: (id) => Promise.resolve(PassportSchema.parse({ name: NAMES[id] ?? id, agent_id: id })),
  });
  const print =
    turns === undefined ? (e: Envelope) => printEnvelope(output, names, e) : envelopePrinter(output, names, { turns });
  for (const e of envelopes) await print(e);
  return out.trimEnd().split('\n');
}

describe('printEnvelope', () => {
  it('prints a failure notice as the agent that could not answer, the reason, the cause, the attempts and the model', async () => {
    expect(await printed([failure])).toEqual([
      '   #5 2020-03-02 09:15 broken could not answer: the model could not be reached after 3 attempts ' +
        '(ECONNREFUSED 127.0.0.1:9) [openai-compatible/local-1]',
    ]);
  });

  it('prints an answer alone, and with its turn report when asked (wal, tail)', async () => {
    expect(await printed([answer])).toEqual(['   #4 2020-03-02 09:15 expert Durable first.']);
    expect(await printed([answer], true)).toEqual([
      '   #4 2020-03-02 09:15 expert Durable first. · 1.2 s · 312→54 tokens · 1 retry · openai/gpt-4.1-mini',
    ]);
  });

  it("prints a packet's fields without its turn report, which follows in words", async () => {
    const packet = envelope(6, {
      event_type: 'ag2.packet',
      sender_id: 'E1',
      event_data: {
        routing: { kind: 'handoff', tool: 'to_billing', target: 'B1' },
        body: 'Over to billing.',
        turn: {
          ...REPORT,
          provider: 'scripted',
          model: 'scripted',
          usage: { input_tokens: 0, output_tokens: 0 },
          retries: 0,
          duration_ms: 84,
        },
      },
    });
    expect(
      await printed(
        [envelope(1, { event_type: 'ag2.msg.text', sender_id: 'B1', event_data: { text: 'hi' } }), packet],
        true,
      ),
    ).toEqual([
      '   #1 2020-03-02 09:15 broken hi',
      '   #6 2020-03-02 09:15 expert ag2.packet {"routing":{"kind":"handoff","tool":"to_billing","target":"broken"},' +
        '"body":"Over to billing."} · 84 ms · 0→0 tokens · scripted',
    ]);
  });
});

describe('turnFailedText', () => {
  it('says each part the notice has, and the attempts once', () => {
    const text = (data: Record<string, unknown>) =>
      turnFailedText(envelope(7, { event_type: 'ag2.turn.failed', sender_id: 'B1', event_data: data }));
    expect(text({ agent_name: 'b', reason: 'the model rejected the API key', code: 'model_auth' })).toBe(
      'could not answer: the model rejected the API key',
    );
    expect(
      text({
        agent_name: 'b',
        reason: 'the model timed out after 30 s',
        code: 'model_timeout',
        cause: { kind: 'timeout', message: 'no answer within 30 s' },
        attempts: 1,
        model: 'gpt-4.1-mini',
      }),
    ).toBe('could not answer: the model timed out after 30 s (no answer within 30 s) after 1 attempt [gpt-4.1-mini]');
    expect(
      text({
        agent_name: 'b',
        reason: 'the model rejected the API key',
        code: 'model_auth',
        cause: { kind: 'http', status: 401, code: 'invalid_api_key', message: 'Incorrect API key provided: sk-***' },
        attempts: 1,
        provider: 'openai',
        model: 'gpt-4.1-mini',
      }),
    ).toBe(
      'could not answer: the model rejected the API key (401 invalid_api_key: Incorrect API key provided: sk-***) ' +
        'after 1 attempt [openai/gpt-4.1-mini]',
    );
    expect(text({ agent_name: 'b', code: 'model_auth' })).toBeNull();
    expect(turnFailedText(answer)).toBeNull();
  });
});

describe('turnSuffix', () => {
  it('is empty without a readable report', () => {
    expect(turnSuffix(envelope(8, { event_type: 'ag2.msg.text', sender_id: 'E1', event_data: { text: 'x' } }))).toBe(
      '',
    );
    const bad = envelope(9, {
      event_type: 'ag2.msg.text',
      sender_id: 'E1',
      event_data: { text: 'x', turn: { duration_ms: 5 } },
    });
    expect(turnSuffix(bad)).toBe('');
  });

  it('says durations in ms, seconds, then minutes', () => {
    expect([durationText(840), durationText(1240), durationText(59_940), durationText(125_000)]).toEqual([
      '840 ms',
      '1.2 s',
      '59.9 s',
      '2 m 5 s',
    ]);
  });
});
