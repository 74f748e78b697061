import { encodeAg2Json, type Envelope } from '@ag2net/protocol';
import { WorkflowGraphError, parseOrThrow } from './errors.js';
import { TransitionGraphDictSchema, type TransitionGraphDict, type TransitionSpec } from './graph-schema.js';
import { isRecord } from './records.js';
import { createTransitionRegistry, type TransitionRegistry } from './registry.js';
import { TerminateTarget } from './targets.js';
import type { TransitionCondition, TransitionDecision, TransitionTarget, WorkflowState } from './types.js';

/** One rule: when `when` fires, `then` picks the next speaker. Lower `priority` is checked first. */
export class Transition {
  constructor(
    readonly when: TransitionCondition,
    readonly then: TransitionTarget,
    readonly priority = 0,
  ) {}
}

/** Options of `new TransitionGraph(...)`. */
export interface TransitionGraphOptions {
  /** Who speaks first; must be a participant of the channel. */
  readonly initialSpeaker: string;
  /** The rules, in list order; default none. */
  readonly transitions?: readonly Transition[];
  /** Where the turn goes when no rule fires; default `new TerminateTarget()` (reason `after_work`). */
  readonly defaultTarget?: TransitionTarget;
  /** Close the channel with `max_turns` after this many substantive turns; default `null` (no cap). */
  readonly maxTurns?: number | null;
}

/** Options of `TransitionGraph.fromDict` and `TransitionGraph.loads`. */
export interface GraphLoadOptions {
  /** The names the graph may use; default a fresh `createTransitionRegistry()` (built-ins only). */
  readonly registry?: TransitionRegistry;
}

/**
 * A workflow's script: the first speaker, the rules that pick each next speaker, a fall-through target and an
 * optional turn cap. It is data: `toDict()`/`dumps()` write AG2's format and `fromDict()`/`loads()` read it back.
 */
export class TransitionGraph {
  readonly initialSpeaker: string;
  readonly transitions: readonly Transition[];
  readonly defaultTarget: TransitionTarget;
  readonly maxTurns: number | null;
  readonly #byPriority: readonly Transition[];

  constructor(options: TransitionGraphOptions) {
    this.initialSpeaker = options.initialSpeaker;
    this.transitions = [...(options.transitions ?? [])];
    this.defaultTarget = options.defaultTarget ?? new TerminateTarget();
    this.maxTurns = options.maxTurns ?? null;
    // Array.prototype.sort is stable, so equal priorities keep list order, as Python's sorted() does.
    this.#byPriority = [...this.transitions].sort((a, b) => a.priority - b.priority);
  }

  /**
   * The next speaker after `envelope`: the first transition by priority whose condition fires resolves it, else the
   * default target. `state` is the state after the envelope's bookkeeping.
   */
  select(state: WorkflowState, envelope: Envelope): TransitionDecision {
    for (const transition of this.#byPriority) {
      if (transition.when.evaluate(state, envelope)) return transition.then.resolve(state, envelope);
    }
    return this.defaultTarget.resolve(state, envelope);
  }

  /** AG2's `to_dict()`: the JSON form stored in `knobs.graph`. */
  toDict(): TransitionGraphDict {
    return {
      initial_speaker: this.initialSpeaker,
      transitions: this.transitions.map((t) => ({ when: specOf(t.when), then: specOf(t.then), priority: t.priority })),
      default_target: specOf(this.defaultTarget),
      max_turns: this.maxTurns,
    };
  }

  /** AG2's `dumps()`: `json.dumps(to_dict(), sort_keys=True)`, byte for byte. */
  dumps(): string {
    return encodeAg2Json(this.toDict());
  }

  /**
   * Reads a graph dict (AG2's `to_dict()` format, with AG2's defaults). Throws `WorkflowGraphError` when `data` is
   * not a graph dict or names an unregistered target or condition, or when args are bad; never anything else.
   */
  static fromDict(data: unknown, options: GraphLoadOptions = {}): TransitionGraph {
    if (!isRecord(data)) {
      throw new WorkflowGraphError(
        `transition graph must be a dict, got ${Array.isArray(data) ? 'a list' : typeOf(data)}`,
      );
    }
    const dict = parseOrThrow(TransitionGraphDictSchema, data, 'transition graph');
    const registry = options.registry ?? createTransitionRegistry();
    const transitions = dict.transitions.map(
      (t) => new Transition(registry.buildCondition(t.when.name, t.when.args), targetOf(registry, t.then), t.priority),
    );
    return new TransitionGraph({
      initialSpeaker: dict.initial_speaker,
      transitions,
      defaultTarget: targetOf(registry, dict.default_target),
      maxTurns: dict.max_turns,
    });
  }

  /** AG2's `loads()`: `fromDict` of a dict, or of a JSON string (bad JSON is a `WorkflowGraphError` too). */
  static loads(data: string | Readonly<Record<string, unknown>>, options: GraphLoadOptions = {}): TransitionGraph {
    if (typeof data !== 'string') return TransitionGraph.fromDict(data, options);
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      throw new WorkflowGraphError(`transition graph is not valid JSON: ${message}`, { cause: err });
    }
    return TransitionGraph.fromDict(parsed, options);
  }
}

function specOf(part: TransitionTarget | TransitionCondition): TransitionSpec {
  return { name: part.name, args: part.args() };
}

function targetOf(registry: TransitionRegistry, spec: TransitionSpec | null): TransitionTarget {
  return spec === null ? new TerminateTarget() : registry.buildTarget(spec.name, spec.args);
}

function typeOf(value: unknown): string {
  return value === null ? 'null' : typeof value;
}
