/**
 * The ag2net hub on NATS JetStream: the one authority that admits envelopes into per-channel write-ahead logs.
 *
 * @example
 * ```ts
 * import { startHub } from '@ag2net/hub';
 *
 * await using hub = await startHub({ servers: 'nats://127.0.0.1:4222', prefix: 'ag2' });
 * hub.health(); // { role: 'active', active_channels: 0, … }
 * ```
 */
export { startHub } from './hub.js';
export type { Hub } from './hub.js';
export type { HubOptions } from './options.js';
export type { HubSnapshot } from './snapshot.js';
export { createManualClock } from './manual-clock.js';
export type { ManualClock } from './manual-clock.js';
export { systemClock } from './clock.js';
export type { Clock } from './clock.js';
export { silentLogger } from './logger.js';
export type { Logger } from './logger.js';
export { globMatch, matchesAny } from './core/glob.js';
