import type { Envelope } from '@ag2net/protocol';

/**
 * The folded state of a workflow channel, field for field AG2's `WorkflowState` with its snake_case names.
 * Plain and JSON-serialisable; `fold` returns a new object and never mutates this one.
 */
export type WorkflowState = {
  /** Participant ids by `Participant.order`: the rotation `RoundRobinTarget` walks. */
  readonly participant_order: readonly string[];
  /** Whose turn it is; `null` once the graph terminated (the channel is then closing). */
  readonly expected_next_speaker: string | null;
  readonly last_speaker_id: string | null;
  readonly last_envelope_id: string | null;
  /** Substantive envelopes (`EV_TEXT`, `EV_PACKET`) folded so far; context changes do not count. */
  readonly turn_count: number;
  /** The close reason chosen by the last transition or finish, `""` when the workflow goes on. */
  readonly pending_close_reason: string;
  /** The channel creator, where `RevertToInitiatorTarget` goes. */
  readonly creator_id: string;
  /** `knobs.graph` as given at create: a `TransitionGraph.toDict()`. */
  readonly graph_data: Readonly<Record<string, unknown>>;
  /** Channel-scoped variables, changed by `EV_CONTEXT_SET` and packet `context_updates`. */
  readonly context_vars: Readonly<Record<string, unknown>>;
  /**
   * Participants the hub hid for missing their turn (`hide` handler), in `participant_order`; absent when nobody
   * is. Not in AG2, which declared `hide` but never built it. See `WorkflowAdapter` for the rule.
   */
  readonly hidden?: readonly string[];
  /**
   * Context variables that an envelope with an audience set or deleted, by name; absent when there are none. Not in
   * AG2 (whose hub showed every variable to anyone). `stateFor` uses it to show each participant only what it may see.
   */
  readonly private_context?: Readonly<Record<string, PrivateContextVar>>;
};

/** Where a context variable's current value came from, when an envelope with an audience wrote it. */
export type PrivateContextVar = Readonly<{
  /** Who may see the current value: the readers (audience and sender) of every private write since the last public one. */
  readers: readonly string[];
  /** The value everyone else last saw; absent when they saw no such variable. */
  public_value?: unknown;
}>;

/** What a target decides: the next speaker, or `null` to end the workflow with `closeReason`. */
export interface TransitionDecision {
  readonly nextSpeaker: string | null;
  /** The channel's close reason when `nextSpeaker` is `null`; `""` otherwise. */
  readonly closeReason: string;
}

/**
 * Where the next turn goes. `resolve` is pure: it reads the state after the envelope's bookkeeping (last speaker,
 * turn count, context) and the envelope itself, and never throws.
 */
export interface TransitionTarget {
  /** The registry name, e.g. `agent`. */
  readonly name: string;
  /** The constructor arguments as AG2 serialises them (snake_case keys), a fresh object each call. */
  args(): Record<string, unknown>;
  resolve(state: WorkflowState, envelope: Envelope): TransitionDecision;
}

/** When a transition fires. `evaluate` is a pure predicate over the state after bookkeeping and the envelope. */
export interface TransitionCondition {
  /** The registry name, e.g. `from_speaker`. */
  readonly name: string;
  /** The constructor arguments as AG2 serialises them (snake_case keys), a fresh object each call. */
  args(): Record<string, unknown>;
  evaluate(state: WorkflowState, envelope: Envelope): boolean;
}

/** Builds a target from its serialised args; throws `WorkflowGraphError` on bad args. */
export type TargetFromArgs = (args: Readonly<Record<string, unknown>>) => TransitionTarget;

/** Builds a condition from its serialised args; throws `WorkflowGraphError` on bad args. */
export type ConditionFromArgs = (args: Readonly<Record<string, unknown>>) => TransitionCondition;
