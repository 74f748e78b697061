import { z } from 'zod';
import { DEFAULT_MAX_REQUEST_BYTES, HealthSchema } from './ops.js';

/**
 * The hub roster (`HubNames.hubsPing`): a request every hub of a prefix answers, active or standby, each with an RPC
 * reply (`RpcReplySchema`) whose result is its own `Health`. The request is empty or `{}`; one larger than
 * `HUBS_PING_MAX_REQUEST_BYTES` or of any other shape is answered with `invalid_request`.
 */
export const HubsPingRequestSchema = z.strictObject({});

/** The largest roster request a hub reads (the same bound as its RPC operations'). */
export const HUBS_PING_MAX_REQUEST_BYTES = DEFAULT_MAX_REQUEST_BYTES;

/** Every hub that answered a roster request: the active one first, then the standbys by hub id. */
export const HubRosterSchema = z.array(HealthSchema);
export type HubRoster = z.infer<typeof HubRosterSchema>;

export { DeliveryLagSchema } from './ops.js';
export type { DeliveryLag } from './ops.js';
