import { Registry, collectDefaultMetrics } from 'prom-client';

/**
 * A Prometheus registry of its own (never prom-client's global one, so two services or tests in one process
 * never share metrics) holding the Node.js process metrics (`process_*`, `nodejs_*`).
 */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Seconds buckets of the services' latency histograms (requests, delivery lag): 1 ms to 10 s. */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];
