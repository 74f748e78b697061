import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuOver, type CpuMeter, type CpuWindow } from '../cpu.js';
import type { Throughput } from '../results.js';
import { round, summarize } from '../stats.js';

/** Options of `runClosedLoops`. */
export interface ClosedLoopOptions {
  /** Loops running at once; each has one operation in flight. */
  readonly loops: number;
  /** Time before counting starts, in ms. */
  readonly warmupMs: number;
  /** Time during which completions are counted, in ms. */
  readonly measureMs: number;
  /** One operation of loop `loop`; it throws to report a failure. */
  readonly op: (loop: number) => Promise<void>;
  /** Reads each process's CPU time at the start and end of the window; default none. */
  readonly meter?: CpuMeter;
}

/** More failures than this end a run: the figure would be meaningless. */
const MAX_ERRORS = 100;

/** One closed-loop run, before reduction: `throughputOf` merges several runs (rounds) into one figure. */
export interface LoopRun {
  /** Latencies of the operations that completed inside the measurement window, in ms. */
  readonly latencies: readonly number[];
  readonly seconds: number;
  readonly errors: number;
  readonly loops: number;
  /** Operations completed overall, warm-up included (e.g. how much the hub then has to deliver). */
  readonly total: number;
  readonly cpu: CpuWindow | null;
}

/**
 * Runs `loops` closed loops (each awaits its operation, then starts the next) for a warm-up and then a
 * measurement window; the rate is the operations that completed inside the window divided by its length, and the
 * latencies are theirs.
 */
export async function runClosedLoops(options: ClosedLoopOptions): Promise<LoopRun> {
  const started = performance.now();
  const windowStart = started + options.warmupMs;
  const windowEnd = windowStart + options.measureMs;
  const meter = options.meter;
  const cpuBefore = meter === undefined ? null : sleep(options.warmupMs).then(() => meter.snapshot());
  const cpuAfter =
    meter === undefined ? null : sleep(options.warmupMs + options.measureMs).then(() => meter.snapshot());
  const latencies: number[] = [];
  let total = 0;
  let errors = 0;
  let firstError: unknown = null;
  const loop = async (index: number): Promise<void> => {
    while (performance.now() < windowEnd) {
      const t0 = performance.now();
      try {
        await options.op(index);
      } catch (err) {
        errors += 1;
        firstError ??= err;
        if (errors > MAX_ERRORS) throw new Error(`more than ${MAX_ERRORS} operations failed`, { cause: firstError });
        continue;
      }
      const t1 = performance.now();
      total += 1;
      if (t1 >= windowStart && t1 <= windowEnd) latencies.push(t1 - t0);
    }
  };
  await Promise.all(Array.from({ length: options.loops }, (_, i) => loop(i)));
  const before = await cpuBefore;
  const after = await cpuAfter;
  return {
    latencies,
    seconds: options.measureMs / 1000,
    errors,
    loops: options.loops,
    total,
    cpu: before === null || after === null ? null : { before, after },
  };
}

/** Several runs of the same thing (rounds) as one figure: rates and CPU over their summed windows. */
export function throughputOf(runs: readonly LoopRun[]): Throughput {
  const latencies = runs.flatMap((r) => r.latencies);
  const seconds = runs.reduce((a, r) => a + r.seconds, 0);
  const windows = runs.flatMap((r) => (r.cpu === null ? [] : [r.cpu]));
  return {
    per_s: round(latencies.length / seconds, 1),
    count: latencies.length,
    seconds,
    errors: runs.reduce((a, r) => a + r.errors, 0),
    in_flight: runs[0]?.loops ?? 0,
    latency: summarize(latencies),
    cpu: cpuOver(windows, seconds, latencies.length),
  };
}

/** Runs `loops` loops of `perLoop` operations each, all loops at once; returns the seconds it took. */
export async function runCounted(options: {
  readonly loops: number;
  readonly perLoop: number;
  readonly op: (loop: number, i: number) => Promise<void>;
}): Promise<number> {
  const started = performance.now();
  await Promise.all(
    Array.from({ length: options.loops }, async (_, loop) => {
      for (let i = 0; i < options.perLoop; i += 1) await options.op(loop, i);
    }),
  );
  return (performance.now() - started) / 1000;
}
