import type { TurnObserver } from '@ag2net/agent';
import { Counter, Histogram, type Registry } from 'prom-client';

/** Seconds buckets of the turn-duration histogram: 50 ms to 5 minutes (an LLM turn with tools can be long). */
const TURN_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300];

/**
 * The runner's Prometheus metrics (docs/operations.md lists them), registered in `registry`; the returned
 * observer goes into each hosted agent's `observer` option.
 */
export function runnerMetrics(registry: Registry): TurnObserver {
  const registers = [registry];
  const turns = new Counter({
    name: 'ag2net_runner_turns_total',
    help: 'Turns the default handler ran, by agent name and result (answered, skipped, failed, cancelled).',
    labelNames: ['agent', 'result'] as const,
    registers,
  });
  const failures = new Counter({
    name: 'ag2net_runner_turn_failures_total',
    help: 'Failed turns by agent name and ag2.turn.failed code (model_auth, model_timeout, turn_error, ...).',
    labelNames: ['agent', 'code'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'ag2net_runner_turn_duration_seconds',
    help: 'Time from a trigger reaching the handler to the end of its turn, by agent name and result.',
    labelNames: ['agent', 'result'] as const,
    buckets: TURN_BUCKETS,
    registers,
  });
  const tokens = new Counter({
    name: 'ag2net_runner_model_tokens_total',
    help: 'Model tokens of answered turns as the provider reported them, by agent name and kind (input, output).',
    labelNames: ['agent', 'kind'] as const,
    registers,
  });
  return {
    turnFinished: ({ agent, result, code, durationMs, usage }) => {
      turns.inc({ agent, result });
      duration.observe({ agent, result }, durationMs / 1000);
      if (result === 'failed') failures.inc({ agent, code: code ?? 'unknown' });
      if (usage !== null) {
        tokens.inc({ agent, kind: 'input' }, usage.inputTokens);
        tokens.inc({ agent, kind: 'output' }, usage.outputTokens);
      }
    },
  };
}
