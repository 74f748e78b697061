/**
 * Clients of the ag2net hub over NATS.
 *
 * @example
 * ```ts
 * import { connect } from '@nats-io/transport-node';
 * import { HubRpc } from '@ag2net/client';
 *
 * const rpc = new HubRpc(await connect({ servers: 'nats://127.0.0.1:4222' }), { prefix: 'ag2' });
 * const { passport } = await rpc.call('register', { passport: { name: 'alice' } });
 * ```
 */
export { HubRpc, HubUnavailableError, DEFAULT_RPC_TIMEOUT_MS } from './rpc.js';
export type { CallOptions, HubRpcOptions } from './rpc.js';
