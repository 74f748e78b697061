/**
 * The ag2net hub on NATS JetStream: the one authority that admits envelopes into per-channel write-ahead logs.
 *
 * @example
 * ```ts
 * import { startHub } from '@ag2net/hub';
 *
 * await using hub = await startHub({ servers: 'nats://127.0.0.1:4222', prefix: 'ag2' });
 * hub.health(); // { role: 'active', active_channels: 0, … }
 *
 * // Governance: a custom arbiter on top of the rules, and a custom violation handler.
 * const arbiter: HubArbiter = {
 *   ...ruleBasedArbiter,
 *   authorizeSend: (check) => (check.envelope.depth > 2 ? deny('too deep') : ruleBasedArbiter.authorizeSend(check)),
 * };
 * await startHub({ arbiter, violationHandlers: [{ name: 'page', notify: 'nobody', handle: (v) => pager.send(v) }] });
 * ```
 */
export { HUB_RECONNECT_WAIT_MS, startHub } from './hub.js';
export type { Hub } from './hub.js';
export type { HubOptions } from './options.js';
export { DEFAULT_INBOX_ACK_WAIT_MS } from './options.js';
export { PartitionCountError } from './nats/provision.js';
export type {
  HubObserver,
  HubView,
  ChannelCount,
  RequestOutcome,
  DroppedRequest,
  DeliveryOutcome,
} from './observe/observer.js';
export type { RegistrationLimits } from './auth/caller-gate.js';
export { API_KEY_SCHEME, NO_AUTH_SCHEME, apiKeyAuthenticator, openRegistration } from './auth/authenticator.js';
export type { AdmissionRequest, ApiKeyAuthenticatorOptions, Authenticator } from './auth/authenticator.js';
export type { CredentialsIssuerOptions } from './auth/issuer.js';
export type { HubSnapshot, ChannelSnapshot } from './operations/hub-snapshot.js';
export { createManualClock } from './base/manual-clock.js';
export type { ManualClock } from './base/manual-clock.js';
export type { Clock } from './base/clock.js';
export { silentLogger } from './base/logger.js';
export type { Logger } from './base/logger.js';
export { ALLOW, ARBITER_FAILED, deny, allowAllArbiter, ruleBasedArbiter } from './governance/arbiter.js';
export { DEFAULT_OPERATOR_LIMITS } from './governance/operator-limits.js';
export type { OperatorLimits } from './governance/operator-limits.js';
export type {
  HubArbiter,
  Decision,
  Party,
  SendCheck,
  InboxCheck,
  DispatchCheck,
  ChannelOpenCheck,
  TaskCheck,
} from './governance/arbiter.js';
export { BUILTIN_EVALUATORS, acksWithin, replyWithin, maxSilence, turnWithin } from './governance/evaluators.js';
export type { ExpectationEvaluator, ExpectationContext, Violation } from './governance/evaluators.js';
export type { ChannelFacts, TurnFact } from './governance/facts.js';
export { BUILTIN_HANDLERS } from './governance/violation-handlers.js';
export type { ViolationHandler, ViolationNotice, FiredViolation } from './governance/violation-handlers.js';
export type { AuditRecord } from './audit/audit-log.js';
