/**
 * The four AG2 channel protocols as pure adapters, and workflow transition graphs.
 *
 * @example
 * ```ts
 * import { createDefaultAdapterRegistry, sequence, type HubAdapter } from '@ag2net/adapters';
 *
 * const adapters = createDefaultAdapterRegistry();
 * const discussion: HubAdapter = adapters.get('discussion', 1); // the side the hub calls
 * let state = discussion.initialState(metadata);
 * discussion.validateSend(metadata, envelope, state); // throws ProtocolError out of turn
 * state = discussion.fold(envelope, state);
 *
 * const knobs = { graph: sequence(['researcher', 'writer', 'editor']).toDict() }; // a workflow channel's knobs
 * ```
 */
export { NO_TRANSITION } from './types.js';
export type {
  AdapterState,
  AdapterResult,
  ExpectedTurn,
  ViewSpec,
  JsonSchemaObject,
  ToolSpec,
  TurnEvent,
  TurnReply,
  EnvelopeOptions,
  TextOptions,
  PacketOptions,
  RoundInput,
  HubAdapter,
  AgentAdapter,
  ChannelAdapter,
  AdapterLookup,
} from './types.js';
export { BaseChannelAdapter } from './base.js';
export {
  defaultRenderEnvelope,
  defaultExtractTurnInput,
  defaultBuildTextEnvelope,
  defaultBuildPacketEnvelope,
  defaultBuildRoundEnvelope,
} from './defaults.js';
export { SAY_TOOL } from './say-tool.js';
export { closeOnTurnFailure } from './turn-failed.js';
export { whoseTurn, type Turn } from './whose-turn.js';
export { AdapterRegistry } from './registry.js';
export { createDefaultAdapterRegistry } from './default-registry.js';
export type { DefaultAdapterRegistryOptions } from './default-registry.js';
export { ConsultingAdapter, CONSULTING_TYPE } from './consulting.js';
export type { ConsultingState } from './consulting.js';
export { ConversationAdapter, CONVERSATION_TYPE } from './conversation.js';
export type { ConversationState } from './conversation.js';
export { DiscussionAdapter, DISCUSSION_TYPE, ORDERING_ROUND_ROBIN } from './discussion.js';
export type { DiscussionState } from './discussion.js';
export {
  WorkflowAdapter,
  WORKFLOW_TYPE,
  WORKFLOW_MANIFEST,
  WorkflowGraphError,
  AgentTarget,
  RoundRobinTarget,
  StayTarget,
  RevertToInitiatorTarget,
  TerminateTarget,
  Always,
  FromSpeaker,
  ToolCalled,
  ContextEquals,
  createTransitionRegistry,
  Transition,
  TransitionGraph,
  TransitionSpecSchema,
  TransitionDictSchema,
  TransitionGraphDictSchema,
  roundRobin,
  sequence,
  resolveRouting,
} from './workflow/index.js';
export type {
  WorkflowAdapterOptions,
  WorkflowState,
  PrivateContextVar,
  TransitionDecision,
  TransitionTarget,
  TransitionCondition,
  TargetFromArgs,
  ConditionFromArgs,
  TransitionRegistry,
  TransitionGraphOptions,
  GraphLoadOptions,
  TransitionSpec,
  TransitionDict,
  TransitionGraphDict,
  TransitionGraphDictInput,
  RoundRobinOptions,
  ContextSetOptions,
} from './workflow/index.js';
