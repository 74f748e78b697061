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
