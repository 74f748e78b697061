/**
 * The AG2 wire protocol: envelopes, event types, channel and identity types, ids and errors, as zod schemas.
 *
 * @example
 * ```ts
 * import { EV_TEXT, EnvelopeSchema, createEnvelope, visibleTo } from '@ag2net/protocol';
 *
 * const env = createEnvelope({ channel_id: 'c1', sender_id: 'alice', event_type: EV_TEXT, event_data: { text: 'hi' } });
 * visibleTo(env, 'bob'); // true: audience null is everyone
 * const parsed = EnvelopeSchema.safeParse(JSON.parse(raw)); // validate what came off the wire
 * ```
 */
export {
  EV_TEXT,
  EV_PACKET,
  EV_CHANNEL_INVITE,
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_INVITE_REJECT,
  EV_CHANNEL_OPENED,
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_EXPIRED,
  EV_EXPECTATION_VIOLATED,
  EV_CONTEXT_SET,
  EV_TASK_CANCEL_REQUEST,
  EV_TASK_CANCELLED,
  EV_TURN_FAILED,
  CHANNEL_PROTOCOL_EVENTS,
  isChannelProtocolEvent,
  isTaskEvent,
  isProtocolEvent,
  isHandshakeReply,
} from './events.js';
export {
  TextDataSchema,
  ContextUpdatesSchema,
  PacketRoutingSchema,
  PacketDataSchema,
  InviteDataSchema,
  ChannelRefDataSchema,
  InviteRejectDataSchema,
  ChannelEndDataSchema,
  ExpectationViolatedDataSchema,
  ContextSetDataSchema,
  TaskCancelDataSchema,
  TurnFailedDataSchema,
  EVENT_DATA_SCHEMAS,
} from './event-data.js';
export type {
  TextData,
  ContextUpdates,
  PacketRouting,
  PacketData,
  InviteData,
  ChannelRefData,
  InviteRejectData,
  ChannelEndData,
  ExpectationViolatedData,
  ContextSetData,
  TaskCancelData,
  TurnFailedData,
} from './event-data.js';
export {
  Priority,
  PrioritySchema,
  TimestampSchema,
  EventTypeSchema,
  EnvelopeSchema,
  createEnvelope,
  visibleTo,
} from './envelope.js';
export type { Envelope, EnvelopeInput } from './envelope.js';
export { IdSchema, createIdFactory, newId, isId } from './ids.js';
export type { Id, IdFactory } from './ids.js';
export { replyEnvelopeId } from './reply-id.js';
export {
  ERROR_CODES,
  WIRE_ERROR_CODES,
  ErrorCode,
  ErrorCodeSchema,
  ErrorScope,
  ExitCode,
  ERROR_CODE_INFO,
  UNKNOWN_ERROR_CODE_INFO,
  RETRYABLE_ERROR_CODES,
  isErrorCode,
  errorCodeInfo,
  isRetryableCode,
  httpStatusOf,
  exitCodeOf,
} from './error-codes.js';
export type { WireErrorCode, ErrorCodeInfo } from './error-codes.js';
export {
  ErrorReason,
  WireErrorSchema,
  Ag2netError,
  HubError,
  NetworkError,
  NotFoundError,
  AccessDeniedError,
  AuthError,
  ProtocolError,
  InboxFullError,
  InboxFullError as InboxFull,
  InvalidRequestError,
  InternalError,
  ConflictError,
  UnavailableError,
  UnknownHubError,
  UnknownNetworkError,
  errorFromWire,
} from './errors.js';
export type { WireError, Ag2netErrorOptions, NetworkErrorOptions } from './errors.js';
export { RemoteAgentOwnerError } from './remote-agent-owner.js';
export { mayResend, isFinalError } from './retry.js';
export {
  ChannelState,
  ChannelStateSchema,
  isTerminalChannelState,
  ParticipantRole,
  ParticipantRoleSchema,
  ParticipantSchema,
  ParticipantRulesSchema,
  ExpectationSchema,
  ChannelManifestSchema,
  ChannelMetadataSchema,
  participantIds,
  isParticipant,
} from './channel.js';
export type {
  Participant,
  ParticipantRules,
  Expectation,
  ChannelManifest,
  ChannelManifestInput,
  ChannelMetadata,
  ChannelMetadataInput,
} from './channel.js';
export {
  PASSPORT_KINDS,
  PassportKindSchema,
  AuthBlockSchema,
  CostProfileSchema,
  PassportSchema,
  effectiveKind,
  ObservedStatSchema,
  ResumeExampleSchema,
  ResumeSchema,
} from './identity.js';
export type {
  PassportKind,
  AuthBlock,
  CostProfile,
  Passport,
  PassportInput,
  ObservedStat,
  ResumeExample,
  Resume,
  ResumeInput,
} from './identity.js';
export { parseDuration, DurationSchema } from './duration.js';
export type { Duration } from './duration.js';
export {
  ChannelTypeAccessSchema,
  AccessBlockSchema,
  RateBlockSchema,
  InboxBlockSchema,
  LimitsBlockSchema,
  RuleSchema,
} from './rule.js';
export type { ChannelTypeAccess, AccessBlock, RateBlock, InboxBlock, LimitsBlock, Rule, RuleInput } from './rule.js';
export { HandoffSchema, FinishSchema, handoff, finish } from './handoff.js';
export type { Handoff, Finish } from './handoff.js';
export {
  TaskState,
  TaskStateSchema,
  TERMINAL_TASK_STATES,
  isTerminalTaskState,
  TaskSpecSchema,
  TaskMetadataSchema,
} from './task.js';
export type { TaskSpec, TaskMetadata, TaskMetadataInput } from './task.js';
export { encodeAg2Json, encodeAg2Envelope, toAg2Dict } from './ag2-json.js';
export { ViolationHandlerName, ViolationRecordSchema } from './violation.js';
export type { ViolationRecord } from './violation.js';
export {
  CloseReason,
  TaskEndReason,
  EXPECTATION_VIOLATED_REASON_PREFIX,
  expectationViolatedReason,
} from './close-reason.js';
export { AuditKind, ResumeSource } from './audit-kind.js';
export { WIRE_SCHEMAS } from './wire.js';
export type { WireTypeName } from './wire.js';
export { HUB_OPS, HUB_OP_NAMES, PendingTurnSchema, HealthSchema, PostAckSchema, AuditRecordSchema } from './rpc/ops.js';
export type { HubOp, HubRequest, HubResponse, PendingTurn, Health, PostAck, AuditRecord } from './rpc/ops.js';
export { HubRosterSchema, DeliveryLagSchema } from './rpc/hub-roster.js';
export type { HubRoster, DeliveryLag } from './rpc/hub-roster.js';
export { PrefixSchema, DEFAULT_PREFIX, hubNames } from './rpc/subjects.js';
export {
  MAX_PARTITIONS,
  PARTITIONED_OPS,
  SCATTERED_OPS,
  fnv1a32,
  partitionOf,
  partitionRuns,
  routeOf,
} from './rpc/partitions.js';
export { OPERATOR_CALLER, IssuedCredentialsSchema } from './rpc/access.js';
export type { IssuedCredentials } from './rpc/access.js';
export type { HubNames } from './rpc/subjects.js';
export { RpcReplySchema } from './rpc/envelope-reply.js';
export type { RpcReply } from './rpc/envelope-reply.js';
export { DEFAULT_MAX_REQUEST_BYTES, LARGE_REQUEST_BYTES, MAX_ENVELOPE_BYTES, MAX_REQUEST_DEPTH } from './rpc/ops.js';
export { MAX_DURATION_SECONDS } from './duration.js';
export {
  TurnReportSchema,
  failureCauseLine,
  MAX_TURN_REPORT_DURATION_MS,
  MAX_TURN_REPORT_TOKENS,
  MAX_TURN_REPORT_COUNT,
  type TurnReport,
} from './event-data.js';
export {
  DataPartSchema,
  MAX_PARTS,
  PartSchema,
  TextPartSchema,
  ensureParts,
  partsOf,
  partsText,
  textData,
  type DataPart,
  type Part,
  type PartInput,
  type Rendered,
  type TextPart,
} from './parts.js';
