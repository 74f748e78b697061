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
export { silentLogger } from './logger.js';
export type { Logger } from './logger.js';
export { contextForTrace } from './trace-context.js';
export type { RemoteSpanContext, SpanContextApi } from './trace-context.js';
// The hub's side of the wire: turning any throwable into a wire error, the stored form of a rule, parsed requests,
// glob matching, and the request guards of its RPC server. Clients never need them.
export { toHubError, toNetworkError } from './errors.js';
export { StoredRuleSchema } from './rule.js';
export { parseGlob, matchGlobTokens } from './glob.js';
export type { GlobToken, ParsedGlob } from './glob.js';
export type { HubRequestParsed } from './rpc/ops.js';
export { clip } from './issues.js';
export { jsonDepthExceeds } from './json-depth.js';
export { globProblem, MAX_GLOB_LENGTH } from './glob.js';
export { defaultRule } from './rule.js';
export { isReplyFormId, isReplyIdOf } from './reply-id.js';
export { violationRecordOf } from './violation.js';
export { HubsPingRequestSchema, HUBS_PING_MAX_REQUEST_BYTES } from './rpc/hub-roster.js';
export { Access, CallerSchema, UserPublicKeySchema, TurnLockHolderSchema } from './rpc/access.js';
export { LIST_PAGE_BYTES } from './rpc/ops.js';
export { auditRecordMatches } from './rpc/audit-filter.js';
export type { AuditRecordFilter } from './rpc/audit-filter.js';
// The hub's and its clients' side of the streams: the WAL's and the deliveries' NATS headers.
export { WalHeader, DeliveryHeader, DELIVERY_ORIGIN_HUB } from './rpc/subjects.js';
// How a trace id becomes the W3C trace and span ids of the spans the client and the hub start for it.
export { traceAnchorOf } from './trace-id.js';
export type { TraceAnchor } from './trace-id.js';
// Messages that quote user input and schema issues, bounded, for every package's errors.
export { repr } from './repr.js';
export type { ReprOptions } from './repr.js';
export { formatIssues, MAX_ISSUES_MESSAGE_CHARS } from './issues.js';
export type { FormatIssuesOptions } from './issues.js';
