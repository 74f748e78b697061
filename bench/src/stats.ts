import type { LatencySummaryResult, Spread } from './results.js';

/** The `p`-th percentile (0–100) of `samples` by nearest rank; `NaN` for no samples. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

/** Percentiles, max and mean of latency samples in ms. */
export function summarize(samples: readonly number[]): LatencySummaryResult {
  const sum = samples.reduce((a, b) => a + b, 0);
  return {
    count: samples.length,
    p50_ms: round(percentile(samples, 50)),
    p90_ms: round(percentile(samples, 90)),
    p99_ms: round(percentile(samples, 99)),
    max_ms: round(samples.length === 0 ? Number.NaN : samples.reduce((a, b) => Math.max(a, b), -Infinity)),
    mean_ms: round(samples.length === 0 ? Number.NaN : sum / samples.length),
  };
}

/** `value` rounded to `digits` decimals (3 by default): enough for ms figures, short in JSON. */
export function round(value: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** `numerator / denominator`, rounded; `NaN` when the denominator is 0. */
export function ratio(numerator: number, denominator: number): number {
  return denominator === 0 ? Number.NaN : round(numerator / denominator);
}

/** The median of a few values (e.g. sweeper ticks). */
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Min / median / max of one figure over several runs. */
export function spreadOf<R>(runs: readonly R[], pick: (run: R) => number): Spread {
  const values = runs.map(pick);
  return { min: Math.min(...values), median: round(median(values), 1), max: Math.max(...values) };
}
