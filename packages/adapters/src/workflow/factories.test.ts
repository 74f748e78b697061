import { describe, expect, it } from 'vitest';
import { Always, FromSpeaker } from './conditions.js';
import { WorkflowGraphError } from './errors.js';
import { roundRobin, sequence } from './factories.js';
import { Transition } from './graph.js';
import { AgentTarget, RoundRobinTarget, TerminateTarget } from './targets.js';

describe('graph factories', () => {
  it('roundRobin opens with the first participant and rotates on every turn', () => {
    const graph = roundRobin(['a', 'b', 'c'], { maxTurns: 6 });
    expect(graph.initialSpeaker).toBe('a');
    expect(graph.maxTurns).toBe(6);
    expect(graph.transitions).toEqual([new Transition(new Always(), new RoundRobinTarget())]);
    expect(graph.defaultTarget).toEqual(new TerminateTarget('round_robin_complete'));
  });

  it('roundRobin has no turn cap unless given one', () => {
    expect(roundRobin(['a']).maxTurns).toBeNull();
  });

  it('sequence chains each step to the next, ends with sequence_complete and caps turns at the step count', () => {
    const graph = sequence(['a', 'b', 'c']);
    expect(graph.initialSpeaker).toBe('a');
    expect(graph.maxTurns).toBe(3);
    expect(graph.transitions).toEqual([
      new Transition(new FromSpeaker('a'), new AgentTarget('b')),
      new Transition(new FromSpeaker('b'), new AgentTarget('c')),
    ]);
    expect(graph.defaultTarget).toEqual(new TerminateTarget('sequence_complete'));
  });

  it('a one-step sequence has no transitions', () => {
    expect(sequence(['solo']).transitions).toEqual([]);
  });

  it("rejects empty lists with AG2's messages", () => {
    expect(() => roundRobin([])).toThrow(new WorkflowGraphError('round_robin requires at least 1 participant'));
    expect(() => sequence([])).toThrow(new WorkflowGraphError('sequence requires at least 1 step'));
    expect(() => sequence([])).toThrow(WorkflowGraphError);
  });
});
