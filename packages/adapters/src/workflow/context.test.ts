import { describe, expect, it } from 'vitest';
import { NO_TRANSITION } from '../types.js';
import { WorkflowAdapter } from './adapter.js';
import { ContextEquals, FromSpeaker, ToolCalled } from './conditions.js';
import { Transition, TransitionGraph } from './graph.js';
import { buildContextSetEnvelope } from './packet-text.js';
import { AgentTarget, TerminateTarget } from './targets.js';
import {
  CID,
  admit,
  admitAll,
  contextEnv,
  packetEnv,
  refold,
  textEnv,
  workflowMetadata,
} from '../../test/workflow-helpers.js';

const adapter = new WorkflowAdapter();

function metaFor(graph: TransitionGraph, participants: readonly string[], contextVars?: Record<string, unknown>) {
  const knobs =
    contextVars === undefined ? { graph: graph.toDict() } : { graph: graph.toDict(), context_vars: contextVars };
  return workflowMetadata({ participants, knobs });
}

describe('packets with context updates (test_packet_with_context_update.py)', () => {
  it('applies context_updates before routing, so ContextEquals sees the new value', () => {
    const graph = new TransitionGraph({
      initialSpeaker: 'triage',
      transitions: [
        new Transition(new ContextEquals('category', 'technical'), new AgentTarget('technical')),
        new Transition(new ContextEquals('category', 'billing'), new AgentTarget('billing')),
      ],
    });
    const meta = metaFor(graph, ['triage', 'technical', 'billing']);
    const env = packetEnv('triage', {
      routing: { kind: 'text' },
      context_updates: { set: { category: 'technical' }, delete: [] },
      body: 'x',
    });
    const { state } = admitAll(adapter, meta, [env]);
    expect(state.context_vars).toEqual({ category: 'technical' });
    expect(state.expected_next_speaker).toBe('technical');
  });

  it('deletes a seeded variable so ContextEquals(key, null) terminates', () => {
    const graph = new TransitionGraph({
      initialSpeaker: 'a',
      transitions: [new Transition(new ContextEquals('route', null), new TerminateTarget('cleared'))],
    });
    const meta = metaFor(graph, ['a', 'b'], { route: 'stale' });
    const env = packetEnv('a', {
      routing: { kind: 'text' },
      context_updates: { set: {}, delete: ['route'] },
      body: '',
    });
    const { state, results } = admitAll(adapter, meta, [env]);
    expect(state.context_vars).toEqual({});
    expect([state.expected_next_speaker, state.pending_close_reason]).toEqual([null, 'cleared']);
    expect(results).toEqual([{ nextState: 'closing', autoCloseReason: 'cleared' }]);
  });

  it('keeps the context on empty updates and routes by FromSpeaker', () => {
    const graph = new TransitionGraph({
      initialSpeaker: 'a',
      transitions: [new Transition(new FromSpeaker('a'), new AgentTarget('b'))],
    });
    const meta = metaFor(graph, ['a', 'b'], { existing: 'kept' });
    const env = packetEnv('a', { routing: { kind: 'text' }, context_updates: { set: {}, delete: [] }, body: 'hi' });
    const { state } = admitAll(adapter, meta, [env]);
    expect([state.context_vars, state.expected_next_speaker]).toEqual([{ existing: 'kept' }, 'b']);
  });

  it('lets routing.target beat a ToolCalled rule for the same tool', () => {
    const graph = new TransitionGraph({
      initialSpeaker: 'a',
      transitions: [new Transition(new ToolCalled('smart_route'), new AgentTarget('a'))],
    });
    const meta = metaFor(graph, ['a', 'b']);
    const env = packetEnv('a', {
      routing: { kind: 'handoff', tool: 'smart_route', reason: '', target: 'b' },
      body: '',
    });
    expect(admitAll(adapter, meta, [env]).state.expected_next_speaker).toBe('b');
  });
});

describe('context variables (test_context_vars.py)', () => {
  const graph = new TransitionGraph({
    initialSpeaker: 'triage',
    transitions: [
      new Transition(new FromSpeaker('security'), new TerminateTarget('security_done'), 0),
      new Transition(new ContextEquals('route', 'security'), new AgentTarget('security'), 1),
      new Transition(new FromSpeaker('triage'), new AgentTarget('bob'), 2),
    ],
  });
  const meta = metaFor(graph, ['triage', 'bob', 'security']);
  const set = (sender: string, data: Record<string, unknown>) => contextEnv(sender, data);

  it('merges an EV_CONTEXT_SET into the variables', () => {
    const { state } = admitAll(adapter, meta, [set('triage', { set: { priority: 'high', ticket_id: 'T-481' } })]);
    expect(state.context_vars).toEqual({ priority: 'high', ticket_id: 'T-481' });
  });

  it('deletes before it sets', () => {
    const log = [
      set('triage', { set: { priority: 'high', temporary: 'x' } }),
      set('triage', { delete: ['temporary'], set: { resolved: true } }),
    ];
    expect(admitAll(adapter, meta, log).state.context_vars).toEqual({ priority: 'high', resolved: true });
  });

  it('accepts a context change from a participant who is not the current speaker', () => {
    const state = adapter.initialState(meta);
    expect(() =>
      adapter.validateSend(meta, buildContextSetEnvelope(CID, 'bob', { set: { k: 'v' } }), state),
    ).not.toThrow();
  });

  it('routes on a variable set before the kickoff and closes with the specialist reason', () => {
    const log = [
      set('bob', { set: { route: 'security' } }),
      textEnv('triage', 'kickoff'),
      textEnv('security', 'handled'),
    ];
    const { states, results } = admitAll(adapter, meta, log);
    expect(states.map((s) => s.expected_next_speaker)).toEqual(['triage', 'security', null]);
    expect(results).toEqual([NO_TRANSITION, NO_TRANSITION, { nextState: 'closing', autoCloseReason: 'security_done' }]);
  });

  it('re-folds the log to the same variables', () => {
    const log = [set('triage', { set: { k1: 'v1', k2: 'v2' } }), set('bob', { delete: ['k1'], set: { k3: 'v3' } })];
    const live = admitAll(adapter, meta, log).state;
    expect(live.context_vars).toEqual({ k2: 'v2', k3: 'v3' });
    expect(refold(adapter, meta, log)).toEqual(live);
  });

  it('leaves the turn count and the expected speaker alone', () => {
    const before = adapter.initialState(meta);
    const { state, result } = admit(adapter, meta, before, set('bob', { set: { a: 1 } }));
    expect([state.turn_count, state.expected_next_speaker, state.last_speaker_id]).toEqual([0, 'triage', null]);
    expect(result).toEqual(NO_TRANSITION);
  });
});
