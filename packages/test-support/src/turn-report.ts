/**
 * The turn report `turnReportFixture` starts from: a turn started at 2026-03-02T09:15:04.120Z that took 1 240 ms on
 * openai / gpt-4.1-mini, 312 tokens in and 54 out, 2 attempts of which 1 retry, no tool call.
 */
const TURN_REPORT = {
  started_at: '2026-03-02T09:15:04.120Z',
  duration_ms: 1240,
  provider: 'openai',
  model: 'gpt-4.1-mini',
  usage: { input_tokens: 312, output_tokens: 54 },
  attempts: 2,
  retries: 1,
  tool_calls: 0,
};

/**
 * A turn report as an agent's answer carries it in `event_data.turn` (`TurnReportSchema` of `@ag2net/protocol`,
 * whose tests parse this one), with `overrides` replacing whole fields. A fresh object on every call.
 */
export function turnReportFixture(overrides: Partial<typeof TURN_REPORT> = {}): typeof TURN_REPORT {
  return { ...TURN_REPORT, usage: { ...TURN_REPORT.usage }, ...overrides };
}
