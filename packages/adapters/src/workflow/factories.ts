import { CloseReason } from '@ag2net/protocol';
import { Always, FromSpeaker } from './conditions.js';
import { WorkflowGraphError } from './errors.js';
import { Transition, TransitionGraph } from './graph.js';
import { AgentTarget, RoundRobinTarget, TerminateTarget } from './targets.js';

/** Options of `roundRobin`. */
export interface RoundRobinOptions {
  /** Close with `max_turns` after this many turns; default `null` (rotate until closed). */
  readonly maxTurns?: number | null;
}

/**
 * AG2's `TransitionGraph.round_robin`: `participants[0]` opens, then every turn goes to the next participant in
 * channel order. The default target `TerminateTarget('round_robin_complete')` is never reached by the rotation.
 * Throws `WorkflowGraphError` for an empty list.
 */
export function roundRobin(participants: readonly string[], options: RoundRobinOptions = {}): TransitionGraph {
  const first = participants[0];
  if (first === undefined) throw new WorkflowGraphError('round_robin requires at least 1 participant');
  return new TransitionGraph({
    initialSpeaker: first,
    transitions: [new Transition(new Always(), new RoundRobinTarget())],
    defaultTarget: new TerminateTarget(CloseReason.RoundRobinComplete),
    maxTurns: options.maxTurns ?? null,
  });
}

/**
 * AG2's `TransitionGraph.sequence`: a pipeline `steps[0] → steps[1] → …`; after the last step the workflow ends
 * with `sequence_complete`, and `max_turns` is the number of steps. Throws `WorkflowGraphError` for an empty list.
 */
export function sequence(steps: readonly string[]): TransitionGraph {
  const first = steps[0];
  if (first === undefined) throw new WorkflowGraphError('sequence requires at least 1 step');
  const transitions = steps
    .slice(1)
    .map((next, i) => new Transition(new FromSpeaker(steps[i] ?? first), new AgentTarget(next)));
  return new TransitionGraph({
    initialSpeaker: first,
    transitions,
    defaultTarget: new TerminateTarget(CloseReason.SequenceComplete),
    maxTurns: steps.length,
  });
}
