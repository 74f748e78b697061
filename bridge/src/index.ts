/**
 * The bridge: an HTTP API over the hub for people and tools without NATS. People sign in with their API key and act
 * as their own identity, over their own credentials; operators sign in with the operator key and read as `$operator`.
 *
 * @example
 * ```ts
 * import { startBridge } from '@ag2net/bridge';
 *
 * await using bridge = await startBridge({ servers: 'nats://127.0.0.1:4222', registrantCreds: '.data/auth/registrant.creds',
 *   operatorCreds: '.data/auth/operator-caller.creds', apiKeys: { alice: 'k-alice' }, secret, operatorKey, port: 0 });
 * const { token } = await (await fetch(`${bridge.url}/v1/session`, { method: 'POST',
 *   headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'alice', api_key: 'k-alice' }) })).json();
 * ```
 */
export { startBridge } from './server.js';
export type { Bridge, BridgeState } from './server.js';
export { bridgeMetrics } from './metrics.js';
export type { BridgeGauges, BridgeObserver } from './metrics.js';
export { bridgeReadiness, startBridgeOps } from './ops.js';
export type { BridgeOps } from './ops.js';
export type { BridgeOptions } from './options.js';
export { DEFAULT_BRIDGE_PORT } from './options.js';
export { personSeed } from './person-keys.js';
