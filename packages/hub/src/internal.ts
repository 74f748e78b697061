/**
 * What other ag2net packages (the benchmarks' raw baselines, tests) share with the hub but users must not rely on:
 * the hub's own stream configurations, which change with the hub's storage layout.
 */
export { walStreamConfig, inboxStreamConfig } from './nats/provision.js';
export type { StreamNames, StreamQuotas } from './nats/provision.js';
export { GONE_CONFIRM_MS } from './lease/presence.js';
