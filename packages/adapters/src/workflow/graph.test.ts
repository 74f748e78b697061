import { ProtocolError } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { Always, ContextEquals, FromSpeaker, ToolCalled } from './conditions.js';
import { WorkflowGraphError } from './errors.js';
import { roundRobin } from './factories.js';
import { Transition, TransitionGraph } from './graph.js';
import { createTransitionRegistry } from './registry.js';
import { AgentTarget, RevertToInitiatorTarget, StayTarget, TerminateTarget } from './targets.js';
import { packetEnv, stateWith, textEnv } from '../../test/workflow-helpers.js';
import type { TransitionCondition } from './types.js';

/** AG2's `WhenIdle(seconds)` custom condition from test_workflow.py. */
class WhenIdle implements TransitionCondition {
  readonly name = 'when_idle';
  constructor(readonly seconds: number) {}
  args(): Record<string, unknown> {
    return { seconds: this.seconds };
  }
  evaluate(): boolean {
    return false;
  }
}

function whenIdleFromArgs(args: Readonly<Record<string, unknown>>): WhenIdle {
  const seconds = args['seconds'];
  if (typeof seconds !== 'number') throw new TypeError('seconds must be a number');
  return new WhenIdle(seconds);
}

const threeRules = new TransitionGraph({
  initialSpeaker: 'alice',
  transitions: [
    new Transition(new ToolCalled('escalate'), new AgentTarget('carol'), 1),
    new Transition(new FromSpeaker('alice'), new AgentTarget('bob'), 0),
    new Transition(new Always(), new RevertToInitiatorTarget(), 0),
  ],
  defaultTarget: new TerminateTarget('done'),
  maxTurns: 10,
});

describe('TransitionGraph serialisation', () => {
  it("writes AG2's to_dict shape exactly", () => {
    expect(threeRules.toDict()).toEqual({
      initial_speaker: 'alice',
      transitions: [
        {
          when: { name: 'tool_called', args: { tool_name: 'escalate' } },
          then: { name: 'agent', args: { agent_id: 'carol' } },
          priority: 1,
        },
        {
          when: { name: 'from_speaker', args: { agent_id: 'alice' } },
          then: { name: 'agent', args: { agent_id: 'bob' } },
          priority: 0,
        },
        { when: { name: 'always', args: {} }, then: { name: 'revert_to_initiator', args: {} }, priority: 0 },
      ],
      default_target: { name: 'terminate', args: { reason: 'done' } },
      max_turns: 10,
    });
  });

  it('round-trips a graph with priorities kept in list order', () => {
    const loaded = TransitionGraph.loads(threeRules.toDict());
    expect(loaded.transitions.map((t) => t.priority)).toEqual([1, 0, 0]);
    expect(loaded.transitions[0]?.when).toEqual(new ToolCalled('escalate'));
    expect(loaded.defaultTarget).toEqual(new TerminateTarget('done'));
    expect(loaded.maxTurns).toBe(10);
    expect(loaded.toDict()).toEqual(threeRules.toDict());
  });

  it('dumps sorted-key JSON that loads back to the same graph', () => {
    const graph = roundRobin(['a', 'b'], { maxTurns: 5 });
    expect(graph.dumps()).toBe(
      '{"default_target": {"args": {"reason": "round_robin_complete"}, "name": "terminate"}, "initial_speaker": "a", ' +
        '"max_turns": 5, "transitions": [{"priority": 0, "then": {"args": {}, "name": "round_robin"}, ' +
        '"when": {"args": {}, "name": "always"}}]}',
    );
    expect(TransitionGraph.loads(graph.dumps()).toDict()).toEqual(graph.toDict());
  });

  it("applies AG2's defaults to a minimal dict", () => {
    const graph = TransitionGraph.fromDict({
      initial_speaker: 'a',
      transitions: [{ when: { name: 'always' }, then: null }],
    });
    expect(graph.toDict()).toEqual({
      initial_speaker: 'a',
      transitions: [
        {
          when: { name: 'always', args: {} },
          then: { name: 'terminate', args: { reason: 'after_work' } },
          priority: 0,
        },
      ],
      default_target: { name: 'terminate', args: { reason: 'after_work' } },
      max_turns: null,
    });
    expect(TransitionGraph.fromDict({ initial_speaker: 'a', default_target: null }).defaultTarget).toEqual(
      new TerminateTarget(),
    );
  });

  it('names an unknown target or condition in a WorkflowGraphError', () => {
    const badTarget = { initial_speaker: 'a', default_target: { name: 'teleport', args: {} } };
    const badCondition = { initial_speaker: 'a', transitions: [{ when: { name: 'psychic' }, then: { name: 'stay' } }] };
    expect(() => TransitionGraph.loads(badTarget)).toThrow(
      new WorkflowGraphError("no transition target registered for 'teleport'"),
    );
    expect(() => TransitionGraph.loads(badCondition)).toThrow("no transition condition registered for 'psychic'");
  });

  it('WorkflowGraphError is a ProtocolError named WorkflowGraphError', () => {
    const err = new WorkflowGraphError('x');
    expect(err).toBeInstanceOf(ProtocolError);
    expect(err.name).toBe('WorkflowGraphError');
    expect(err.code).toBe('protocol_error');
  });

  it.each([
    ['a list', [], 'transition graph must be a dict, got a list'],
    ['null', null, 'transition graph must be a dict, got null'],
    ['a number', 3, 'transition graph must be a dict, got number'],
    [
      'no initial_speaker',
      {},
      'invalid transition graph: initial_speaker: Invalid input: expected string, received undefined',
    ],
    [
      'transitions not a list',
      { initial_speaker: 'a', transitions: {} },
      'invalid transition graph: transitions: Invalid input: expected array, received object',
    ],
    [
      'a transition without when',
      { initial_speaker: 'a', transitions: [{ then: null }] },
      'invalid transition graph: transitions.0.when: Invalid input: expected object, received undefined',
    ],
    [
      'a fractional priority',
      { initial_speaker: 'a', transitions: [{ when: { name: 'always' }, then: null, priority: 0.5 }] },
      'invalid transition graph: transitions.0.priority: Invalid input: expected int, received number',
    ],
    [
      'args not a dict',
      { initial_speaker: 'a', default_target: { name: 'stay', args: null } },
      'invalid transition graph: default_target.args: Invalid input: expected record, received null',
    ],
    [
      'bad target args',
      { initial_speaker: 'a', default_target: { name: 'agent', args: { id: 'x' } } },
      'invalid args for transition target \'agent\': agent_id: Invalid input: expected string, received undefined; (root): Unrecognized key: "id"',
    ],
    [
      'a string max_turns',
      { initial_speaker: 'a', max_turns: '5' },
      'invalid transition graph: max_turns: Invalid input: expected number, received string',
    ],
  ])('rejects a graph with %s as a WorkflowGraphError, not a crash', (_label, data, message) => {
    expect(() => TransitionGraph.fromDict(data)).toThrow(new WorkflowGraphError(message));
    expect(() => TransitionGraph.fromDict(data)).toThrow(WorkflowGraphError);
  });

  it('rejects invalid JSON text as a WorkflowGraphError', () => {
    expect(() => TransitionGraph.loads('{not json')).toThrow(WorkflowGraphError);
    expect(() => TransitionGraph.loads('[1]')).toThrow('transition graph must be a dict, got a list');
  });
});

describe('TransitionRegistry', () => {
  it('comes pre-seeded with the five targets and four conditions', () => {
    const registry = createTransitionRegistry();
    expect(registry.targetNames()).toEqual(['agent', 'round_robin', 'stay', 'revert_to_initiator', 'terminate']);
    expect(registry.conditionNames()).toEqual(['always', 'from_speaker', 'tool_called', 'context_equals']);
  });

  it('round-trips a custom condition once registered, and only on that registry', () => {
    const registry = createTransitionRegistry();
    registry.registerCondition('when_idle', whenIdleFromArgs);
    const graph = new TransitionGraph({
      initialSpeaker: 'a',
      transitions: [new Transition(new WhenIdle(42), new StayTarget())],
    });
    const loaded = TransitionGraph.loads(graph.dumps(), { registry });
    expect(loaded.transitions[0]?.when).toEqual(new WhenIdle(42));
    expect(loaded.toDict()).toEqual(graph.toDict());
    expect(() => TransitionGraph.loads(graph.dumps(), { registry: createTransitionRegistry() })).toThrow(
      "no transition condition registered for 'when_idle'",
    );
    expect(() => TransitionGraph.loads(graph.dumps())).toThrow("no transition condition registered for 'when_idle'");
  });

  it('replaces a name registered again', () => {
    const registry = createTransitionRegistry();
    registry.registerTarget('stay', () => new AgentTarget('replacement'));
    expect(registry.buildTarget('stay', {})).toEqual(new AgentTarget('replacement'));
    expect(createTransitionRegistry().buildTarget('stay', {})).toEqual(new StayTarget());
  });

  it('wraps an error thrown by a custom factory in a WorkflowGraphError', () => {
    const registry = createTransitionRegistry();
    registry.registerCondition('when_idle', whenIdleFromArgs);
    expect(() => registry.buildCondition('when_idle', { seconds: 'soon' })).toThrow(
      new WorkflowGraphError("invalid args for transition condition 'when_idle': seconds must be a number"),
    );
  });
});

describe('TransitionGraph.select', () => {
  it('checks lower priorities first and keeps list order among equal priorities', () => {
    const state = stateWith({ creator_id: 'alice' });
    expect(threeRules.select(state, textEnv('alice', 'x'))).toEqual({ nextSpeaker: 'bob', closeReason: '' });
    expect(threeRules.select(state, packetEnv('alice', { routing: { kind: 'handoff', tool: 'escalate' } }))).toEqual({
      nextSpeaker: 'bob',
      closeReason: '',
    });
    expect(threeRules.select(state, textEnv('bob', 'x'))).toEqual({ nextSpeaker: 'alice', closeReason: '' });
  });

  it('falls through to the default target when no rule fires', () => {
    const graph = new TransitionGraph({
      initialSpeaker: 'a',
      transitions: [new Transition(new ContextEquals('k', 'v'), new StayTarget())],
      defaultTarget: new TerminateTarget('nothing_matched'),
    });
    expect(graph.select(stateWith({}), textEnv('a', 'x'))).toEqual({
      nextSpeaker: null,
      closeReason: 'nothing_matched',
    });
  });
});
