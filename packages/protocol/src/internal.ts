/**
 * What the other ag2net packages share but users of the protocol package must not rely on: pure helpers with no
 * I/O, kept out of the public entry point so that they can change with the packages that use them.
 *
 * @example
 * ```ts
 * import { KeyedSerial } from '@ag2net/protocol/internal';
 *
 * const serial = new KeyedSerial();
 * void serial.run(channelId, () => handle(envelope)); // one channel at a time, channels in parallel
 * ```
 */
export { KeyedSerial } from './keyed-serial.js';
export { pause } from './pause.js';
export { contextForTrace } from './trace-context.js';
export type { RemoteSpanContext, SpanContextApi } from './trace-context.js';
// The hub's side of the wire: turning any throwable into a wire error, the stored form of a rule, parsed requests,
// glob matching, and the request guards of its RPC server. Clients never need them.
export { toHubError, toNetworkError } from './errors.js';
export { StoredRuleSchema } from './rule.js';
export { parseGlob, matchGlobTokens } from './glob.js';
export type { GlobToken } from './glob.js';
export type { HubRequestParsed } from './rpc/ops.js';
export { clip } from './issues.js';
export { jsonDepthExceeds } from './json-depth.js';
