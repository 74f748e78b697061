import { ChannelState, EV_CHANNEL_OPENED, createEnvelope, type Envelope } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { NO_TRANSITION } from '../types.js';
import { WorkflowAdapter } from './adapter.js';
import { Always } from './conditions.js';
import { roundRobin, sequence } from './factories.js';
import { createTransitionRegistry } from './registry.js';
import { CID, contextEnv, packetEnv, textEnv, workflowMetadata } from '../../test/workflow-helpers.js';
import type { WorkflowState } from './types.js';

const adapter = new WorkflowAdapter();
const trio = ['alice', 'bob', 'carol'];
const rrMeta = workflowMetadata({ participants: trio, knobs: { graph: roundRobin(trio).toDict() } });

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}

describe('WorkflowAdapter manifest and initial state', () => {
  it("declares AG2's workflow manifest", () => {
    expect(adapter.manifest).toEqual({
      type: 'workflow',
      version: 1,
      participants: { min: 2, max: null, roles: [] },
      knobs_schema: { graph: 'TransitionGraph' },
      default_view_policy: 'named_windowed_summary',
      expectations: [
        { name: 'turn_within', on_violation: 'warn', params: { seconds: 120 }, applies_to: null },
        { name: 'turn_within', on_violation: 'auto_close', params: { seconds: 600 }, applies_to: null },
      ],
    });
  });

  it('starts with the graph initial speaker, the participant order and the seeded context', () => {
    const graph = roundRobin(trio).toDict();
    const meta = workflowMetadata({ participants: trio, knobs: { graph, context_vars: { route: 'x' } } });
    expect(adapter.initialState(meta)).toEqual({
      participant_order: trio,
      expected_next_speaker: 'alice',
      last_speaker_id: null,
      last_envelope_id: null,
      turn_count: 0,
      pending_close_reason: '',
      creator_id: 'alice',
      graph_data: graph,
      context_vars: { route: 'x' },
    });
    expect(adapter.initialState(meta).graph_data).toBe(graph);
  });
});

describe('WorkflowAdapter.fold', () => {
  const state = adapter.initialState(rrMeta);

  it('never mutates the state or the envelope', () => {
    const frozen = deepFreeze(structuredClone(state));
    const env = deepFreeze(
      packetEnv('alice', { routing: { kind: 'text' }, context_updates: { set: { a: 1 }, delete: [] }, body: 'b' }),
    );
    const snapshot = structuredClone([frozen, env]);
    const next = adapter.fold(env, frozen);
    expect([frozen, env]).toEqual(snapshot);
    expect(next).toEqual({
      ...state,
      expected_next_speaker: 'bob',
      last_speaker_id: 'alice',
      last_envelope_id: env.envelope_id,
      turn_count: 1,
      context_vars: { a: 1 },
    });
  });

  it.each<[string, Envelope]>([
    ['an unknown event type', createEnvelope({ channel_id: CID, sender_id: 'alice', event_type: 'acme.note' })],
    ['a channel event', createEnvelope({ channel_id: CID, sender_id: 'hub', event_type: EV_CHANNEL_OPENED })],
    ['a packet with an unknown routing kind', packetEnv('alice', { routing: { kind: 'teleport' } })],
    ['a packet whose routing is null', packetEnv('alice', { routing: null })],
    ['a packet with non-list deletes', packetEnv('alice', { context_updates: { delete: 'k' } })],
    ['a context change whose set is not a dict', contextEnv('alice', { set: ['k'] })],
  ])('leaves the state as it is for %s', (_label, env) => {
    expect(adapter.fold(env, state)).toBe(state);
  });

  it('leaves the state as it is when the stored graph does not load', () => {
    const broken: WorkflowState = { ...state, graph_data: { initial_speaker: 7 } };
    expect(adapter.fold(textEnv('alice', 'x'), broken)).toBe(broken);
    expect(adapter.onAccepted(rrMeta, textEnv('alice', 'x'), broken)).toEqual(NO_TRANSITION);
  });

  it('parses each graph_data object once, however many envelopes it folds', () => {
    let builds = 0;
    const registry = createTransitionRegistry();
    registry.registerCondition('always', () => {
      builds += 1;
      return new Always();
    });
    const counting = new WorkflowAdapter({ registry });
    let s = counting.initialState(rrMeta);
    for (const who of ['alice', 'bob', 'carol', 'alice']) s = counting.fold(textEnv(who, 'x'), s);
    counting.onAccepted(rrMeta, textEnv('alice', 'x'), s);
    expect(s.turn_count).toBe(4);
    expect(builds).toBe(1);
  });
});

describe('WorkflowAdapter.onAccepted and expectedNext', () => {
  it('asks for closing with the pending reason, or workflow_terminated, once nobody is expected', () => {
    const base = adapter.initialState(rrMeta);
    const ended: WorkflowState = { ...base, expected_next_speaker: null, pending_close_reason: 'custom' };
    expect(adapter.onAccepted(rrMeta, textEnv('a', 'x'), ended)).toEqual({
      nextState: ChannelState.Closing,
      autoCloseReason: 'custom',
    });
    expect(adapter.onAccepted(rrMeta, textEnv('a', 'x'), { ...ended, pending_close_reason: '' })).toEqual({
      nextState: 'closing',
      autoCloseReason: 'workflow_terminated',
    });
  });

  it('asks for closing with max_turns at the cap, and prefers the graph reason over it', () => {
    const meta = workflowMetadata({
      participants: ['a', 'b', 'c'],
      knobs: { graph: sequence(['a', 'b', 'c']).toDict() },
    });
    const base = adapter.initialState(meta);
    expect(adapter.onAccepted(meta, textEnv('b', 'x'), { ...base, turn_count: 2 })).toEqual(NO_TRANSITION);
    expect(adapter.onAccepted(meta, textEnv('b', 'x'), { ...base, turn_count: 3 })).toEqual({
      nextState: 'closing',
      autoCloseReason: 'max_turns',
    });
    const both: WorkflowState = {
      ...base,
      turn_count: 3,
      expected_next_speaker: null,
      pending_close_reason: 'sequence_complete',
    };
    expect(adapter.onAccepted(meta, textEnv('c', 'x'), both)).toEqual({
      nextState: 'closing',
      autoCloseReason: 'sequence_complete',
    });
  });

  it('ignores envelopes that are not turns', () => {
    const ended: WorkflowState = { ...adapter.initialState(rrMeta), expected_next_speaker: null };
    expect(adapter.onAccepted(rrMeta, contextEnv('alice', { set: {} }), ended)).toEqual(NO_TRANSITION);
  });

  it('expects the next speaker, triggered by the last envelope, and nobody after termination', () => {
    const state = adapter.fold(textEnv('alice', 'x'), adapter.initialState(rrMeta));
    expect(adapter.expectedNext(rrMeta, adapter.initialState(rrMeta))).toEqual({
      agentId: 'alice',
      triggeringEnvelopeId: null,
    });
    expect(adapter.expectedNext(rrMeta, state)).toEqual({
      agentId: 'bob',
      triggeringEnvelopeId: state.last_envelope_id,
    });
    expect(adapter.expectedNext(rrMeta, { ...state, expected_next_speaker: null })).toBeNull();
  });

  it('views the channel as a named windowed summary of max(2N, 4) envelopes', () => {
    const pair = workflowMetadata({ participants: ['a', 'b'], knobs: {} });
    const five = workflowMetadata({ participants: ['a', 'b', 'c', 'd', 'e'], knobs: {} });
    expect(adapter.defaultViewPolicy(pair)).toEqual({ name: 'named_windowed_summary', recentN: 4 });
    expect(adapter.defaultViewPolicy(five)).toEqual({ name: 'named_windowed_summary', recentN: 10 });
  });
});
