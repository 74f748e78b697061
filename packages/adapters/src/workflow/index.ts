/**
 * The workflow channel: an orchestrated multi-party channel whose next speaker a declarative `TransitionGraph`
 * picks, and the graph vocabulary (targets, conditions, registry, factories).
 *
 * @example
 * ```ts
 * import { TransitionGraph, Transition, ToolCalled, FromSpeaker, AgentTarget, RevertToInitiatorTarget,
 *   WorkflowAdapter } from '@ag2net/adapters';
 *
 * const graph = new TransitionGraph({
 *   initialSpeaker: triageId,
 *   transitions: [
 *     new Transition(new ToolCalled('transfer_to_eng'), new AgentTarget(engId)),
 *     new Transition(new FromSpeaker(engId), new RevertToInitiatorTarget()),
 *   ],
 *   maxTurns: 10,
 * });
 * const knobs = { graph: graph.toDict() }; // what the creator passes when opening a 'workflow' channel
 * const adapter = new WorkflowAdapter(); // the hub registers it under ('workflow', 1)
 * ```
 */
export { WorkflowAdapter } from './adapter.js';
export type { WorkflowAdapterOptions } from './adapter.js';
export { WORKFLOW_TYPE, WORKFLOW_MANIFEST } from './manifest.js';
export type {
  WorkflowState,
  PrivateContextVar,
  TransitionDecision,
  TransitionTarget,
  TransitionCondition,
  TargetFromArgs,
  ConditionFromArgs,
} from './types.js';
export { WorkflowGraphError } from './errors.js';
export { AgentTarget, RoundRobinTarget, StayTarget, RevertToInitiatorTarget, TerminateTarget } from './targets.js';
export { Always, FromSpeaker, ToolCalled, ContextEquals } from './conditions.js';
export { createTransitionRegistry } from './registry.js';
export type { TransitionRegistry } from './registry.js';
export { Transition, TransitionGraph } from './graph.js';
export type { TransitionGraphOptions, GraphLoadOptions } from './graph.js';
export { TransitionSpecSchema, TransitionDictSchema, TransitionGraphDictSchema } from './graph-schema.js';
export type { TransitionSpec, TransitionDict, TransitionGraphDict, TransitionGraphDictInput } from './graph-schema.js';
export { roundRobin, sequence } from './factories.js';
export type { RoundRobinOptions } from './factories.js';
export { resolveRouting } from './routing.js';
export { buildContextSetEnvelope, renderPacket, packetTurnText } from './packet-text.js';
export type { ContextSetOptions } from './packet-text.js';
