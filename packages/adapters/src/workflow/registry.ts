import { repr } from '@ag2net/protocol/internal';
import { Always, ContextEquals, FromSpeaker, ToolCalled } from './conditions.js';
import { WorkflowGraphError } from './errors.js';
import { AgentTarget, RevertToInitiatorTarget, RoundRobinTarget, StayTarget, TerminateTarget } from './targets.js';
import type { ConditionFromArgs, TargetFromArgs, TransitionCondition, TransitionTarget } from './types.js';

/**
 * The names a transition graph may use, each bound to a function that builds the target or condition from its
 * serialised args. Registries are instances: register custom names on the one you pass to `TransitionGraph.loads`
 * and the `WorkflowAdapter`; nothing is shared between registries.
 */
export interface TransitionRegistry {
  /** Binds `name` to `fromArgs`; registering a name again replaces the earlier binding. */
  registerTarget(name: string, fromArgs: TargetFromArgs): void;
  /** Binds `name` to `fromArgs`; registering a name again replaces the earlier binding. */
  registerCondition(name: string, fromArgs: ConditionFromArgs): void;
  /**
   * Builds the target registered as `name`. Throws `WorkflowGraphError` for an unknown name
   * (`no transition target registered for 'x'`) or bad args; any other error thrown by `fromArgs` is wrapped.
   */
  buildTarget(name: string, args: Readonly<Record<string, unknown>>): TransitionTarget;
  /** Builds the condition registered as `name`; throws like `buildTarget`. */
  buildCondition(name: string, args: Readonly<Record<string, unknown>>): TransitionCondition;
  /** The registered target names, in registration order. */
  targetNames(): readonly string[];
  /** The registered condition names, in registration order. */
  conditionNames(): readonly string[];
}

/** A fresh registry holding the five built-in targets and four built-in conditions. */
export function createTransitionRegistry(): TransitionRegistry {
  const registry = new MapRegistry();
  registry.registerTarget('agent', (args) => AgentTarget.fromArgs(args));
  registry.registerTarget('round_robin', (args) => RoundRobinTarget.fromArgs(args));
  registry.registerTarget('stay', (args) => StayTarget.fromArgs(args));
  registry.registerTarget('revert_to_initiator', (args) => RevertToInitiatorTarget.fromArgs(args));
  registry.registerTarget('terminate', (args) => TerminateTarget.fromArgs(args));
  registry.registerCondition('always', (args) => Always.fromArgs(args));
  registry.registerCondition('from_speaker', (args) => FromSpeaker.fromArgs(args));
  registry.registerCondition('tool_called', (args) => ToolCalled.fromArgs(args));
  registry.registerCondition('context_equals', (args) => ContextEquals.fromArgs(args));
  return registry;
}

class MapRegistry implements TransitionRegistry {
  readonly #targets = new Map<string, TargetFromArgs>();
  readonly #conditions = new Map<string, ConditionFromArgs>();

  registerTarget(name: string, fromArgs: TargetFromArgs): void {
    this.#targets.set(name, fromArgs);
  }

  registerCondition(name: string, fromArgs: ConditionFromArgs): void {
    this.#conditions.set(name, fromArgs);
  }

  buildTarget(name: string, args: Readonly<Record<string, unknown>>): TransitionTarget {
    const fromArgs = this.#targets.get(name);
    if (fromArgs === undefined) throw new WorkflowGraphError(`no transition target registered for ${repr(name)}`);
    return build(() => fromArgs(args), `transition target ${repr(name)}`);
  }

  buildCondition(name: string, args: Readonly<Record<string, unknown>>): TransitionCondition {
    const fromArgs = this.#conditions.get(name);
    if (fromArgs === undefined) throw new WorkflowGraphError(`no transition condition registered for ${repr(name)}`);
    return build(() => fromArgs(args), `transition condition ${repr(name)}`);
  }

  targetNames(): readonly string[] {
    return [...this.#targets.keys()];
  }

  conditionNames(): readonly string[] {
    return [...this.#conditions.keys()];
  }
}

function build<T>(make: () => T, what: string): T {
  try {
    return make();
  } catch (err) {
    if (err instanceof WorkflowGraphError) throw err;
    const message = err instanceof Error ? err.message : String(err);
    throw new WorkflowGraphError(`invalid args for ${what}: ${message}`, { cause: err });
  }
}
