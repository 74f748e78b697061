import { TurnReportSchema } from '@ag2net/protocol';
import { turnReportFixture } from '@ag2net/test-support';
import { describe, expect, it } from 'vitest';
import { turnReport, type TurnMeasures } from './turn-report.js';

const measures: TurnMeasures = {
  startedAt: Date.parse('2026-03-02T09:15:04.120Z'),
  durationMs: 1240.6,
  model: { provider: 'openai', model: 'gpt-4.1-mini' },
  reply: {
    usage: { inputTokens: 312, outputTokens: 54 },
    usageReported: true,
    attempts: 2,
    retries: 1,
    toolCalls: 0,
  },
};

describe('turnReport', () => {
  it('states the start, the whole milliseconds, the model, the tokens and the counts', () => {
    const report = turnReport(measures);
    expect(report).toStrictEqual(turnReportFixture({ duration_ms: 1241 }));
    expect(TurnReportSchema.parse(report)).toStrictEqual(report);
  });

  it('leaves the tokens out when the provider reported none', () => {
    const report = turnReport({ ...measures, reply: { ...measures.reply, usageReported: false } });
    expect(Object.keys(report)).toEqual([
      'started_at',
      'duration_ms',
      'provider',
      'model',
      'attempts',
      'retries',
      'tool_calls',
    ]);
  });

  it('clamps every number and string to what the schema admits', () => {
    const report = turnReport({
      startedAt: measures.startedAt,
      durationMs: 2 * 86_400_000,
      model: { provider: 'p'.repeat(200), model: '' },
      reply: {
        usage: { inputTokens: 5e9, outputTokens: -3 },
        usageReported: true,
        attempts: 0,
        retries: 4000,
        toolCalls: Number.NaN,
      },
    });
    expect(report).toStrictEqual({
      started_at: '2026-03-02T09:15:04.120Z',
      duration_ms: 86_400_000,
      provider: 'p'.repeat(128),
      model: 'unknown',
      usage: { input_tokens: 1_000_000_000, output_tokens: 0 },
      attempts: 1,
      retries: 1000,
      tool_calls: 0,
    });
    expect(TurnReportSchema.safeParse(report).success).toBe(true);
  });
});
