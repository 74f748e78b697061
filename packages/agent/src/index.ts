/**
 * LLM agents on the ag2net network, on the Vercel AI SDK: the `Agent`, models chosen by configuration, AG2's
 * default handler, views, network tools and skills.
 *
 * @example
 * ```ts
 * import { Agent, createModel, modelFromEnv, registerAgent } from '@ag2net/agent';
 * import { HubClient } from '@ag2net/client';
 *
 * const model = modelFromEnv() ?? createModel({ provider: 'scripted', script: ['Hello from bob.'] });
 * const bob = new Agent({ name: 'bob', instructions: 'Answer in one sentence.', model });
 * await using hub = await HubClient.connect({ servers: 'nats://127.0.0.1:4222' });
 * await registerAgent(hub, bob, { resume: { summary: 'Helpful.' } }); // bob now answers his channels
 * ```
 */
export { Agent, DEFAULT_MAX_STEPS } from './agent.js';
export type { AgentOptions, AskOptions, AskResult, TokenUsage } from './agent.js';
export { turnEventsOf } from './turn-events.js';
export type { StepContent } from './turn-events.js';
export {
  ModelConfigSchema,
  createModel,
  modelConfigFromEnv,
  modelFromEnv,
  DEFAULT_OPENAI_MODEL,
  DEFAULT_ANTHROPIC_MODEL,
} from './model/config.js';
export type { ModelConfig, ModelConfigInput } from './model/config.js';
export {
  DEFAULT_MODEL_TIMEOUT_MS,
  DEFAULT_MODEL_MAX_RETRIES,
  DEFAULT_MODEL_RETRY_DELAY_MS,
  ModelCallError,
  ModelFailureCode,
  withModelLimits,
  describeModelError,
} from './model/limits.js';
export type { ModelLimits, ModelCallErrorOptions } from './model/limits.js';
export { FailureKind, causeLine } from './model/cause.js';
export type { FailureCause } from './model/cause.js';
export { modelIdentity } from './model/identity.js';
export { createScriptedModel } from './model/scripted.js';
export type { ScriptedModel, ScriptedModelOptions } from './model/scripted.js';
export { ScriptStepSchema, ScriptedToolCallSchema, toolCall } from './model/script.js';
export type { ScriptStep, ScriptStepInput, ScriptedToolCall, ScriptedToolCallInput } from './model/script.js';
export { defaultNameResolver } from './views/types.js';
export type { ViewEvent, ViewPolicy, ProjectOptions, NameResolver } from './views/types.js';
export { fullTranscript, namedTranscript, windowedSummary, namedWindowedSummary } from './views/policies.js';
export { viewFromSpec } from './views/spec.js';
export { toModelMessages } from './views/messages.js';
export { parseSkillFrontmatter, renderFallbackSkill } from './skills.js';
export type { ParsedSkill } from './skills.js';
export { NETWORK_TOOL_NAMES, networkTools, adapterTools, bindBuiltinAdapterTool } from './tools/network.js';
export type { AdapterToolBinder } from './tools/network.js';
export type { ToolContext, ToolClient, TaskDirectory } from './tools/context.js';
export { DEFAULT_DELEGATE_TIMEOUT_S } from './tools/delegate.js';
export { createDefaultHandler } from './runtime/handler.js';
export type { DefaultHandlerOptions } from './runtime/handler.js';
export type { TurnObserver, TurnOutcome, TurnResult } from './runtime/turn-observer.js';
export { registerAgent, attachAgent, DEFAULT_AGENT_TURN_ATTEMPTS } from './runtime/register.js';
export type { RegisterAgentOptions } from './runtime/register.js';
export { ChannelWatches } from './runtime/watches.js';
export type { ChannelWatch } from './runtime/watches.js';
export { hubTaskDirectory } from './runtime/tasks.js';
export {
  reportTurnFailure,
  describeTurnFailure,
  isTransientFailure,
  turnFailureReporter,
} from './runtime/turn-failure.js';
export type { TurnFailure, FailedTurnInput } from './runtime/turn-failure.js';
export { TaskMirror } from './tasks/mirror.js';
export type { MirrorClient, MirroredTaskStart } from './tasks/mirror.js';
export { runTask, currentTask, TaskCancelledError } from './tasks/run.js';
export type { TaskOptions, TaskHandle } from './tasks/run.js';
export { currentTurn } from './runtime/turn-context.js';
export type { TurnContext } from './runtime/turn-context.js';
