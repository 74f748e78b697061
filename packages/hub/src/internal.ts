/**
 * What other ag2net packages (the benchmarks' raw baselines) share with the hub but users must not rely on: the
 * hub's own stream configurations, which change with the hub's storage layout.
 */
export { walStreamConfig, inboxStreamConfig } from './nats/provision.js';
export type { StreamNames } from './nats/provision.js';
