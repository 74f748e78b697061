import { ProtocolError, createEnvelope } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { WorkflowAdapter } from './adapter.js';
import { Always } from './conditions.js';
import { roundRobin } from './factories.js';
import { createTransitionRegistry } from './registry.js';
import { CID, contextEnv, packetEnv, textEnv, workflowMetadata } from '../../test/workflow-helpers.js';
import type { WorkflowState } from './types.js';

const adapter = new WorkflowAdapter();
const trio = ['alice', 'bob', 'carol'];
const rrMeta = workflowMetadata({ participants: trio, knobs: { graph: roundRobin(trio).toDict() } });

function rejection(fn: () => unknown): ProtocolError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ProtocolError) return err;
    throw err;
  }
  throw new Error('expected a ProtocolError');
}

describe('WorkflowAdapter create errors', () => {
  const both = (knobs: Record<string, unknown>, participants = trio) => {
    const meta = workflowMetadata({ participants, knobs });
    return [rejection(() => adapter.validateCreate(meta)).message, rejection(() => adapter.initialState(meta)).message];
  };

  it("requires knobs['graph'] as a dict", () => {
    const message = "workflow requires knobs['graph'] as a dict — call TransitionGraph.to_dict() before passing";
    expect(both({})).toEqual([message, message]);
    expect(both({ graph: roundRobin(trio).dumps() })).toEqual([message, message]);
  });

  it('wraps a graph that does not load as invalid workflow graph', () => {
    const message = "invalid workflow graph: no transition target registered for 'warp'";
    expect(both({ graph: { initial_speaker: 'alice', default_target: { name: 'warp' } } })).toEqual([message, message]);
  });

  it('reports a missing initial_speaker as a ProtocolError, not a KeyError', () => {
    const message =
      'invalid workflow graph: invalid transition graph: initial_speaker: Invalid input: expected string, received undefined';
    expect(both({ graph: { transitions: [] } })).toEqual([message, message]);
  });

  it('requires the initial speaker to be a participant (create lists them sorted, initial state in order)', () => {
    const meta = workflowMetadata({ participants: ['zoe', 'adam'], knobs: { graph: roundRobin(['eve']).toDict() } });
    expect(rejection(() => adapter.validateCreate(meta)).message).toBe(
      "workflow initial_speaker 'eve' not in participants ['adam', 'zoe']",
    );
    expect(rejection(() => adapter.initialState(meta)).message).toBe(
      "workflow initial_speaker 'eve' not in participants ['zoe', 'adam']",
    );
  });

  it('requires knobs.context_vars to be a dict when given', () => {
    const message = "workflow knobs['context_vars'] must be a dict if provided";
    expect(both({ graph: roundRobin(trio).toDict(), context_vars: ['x'] })).toEqual([message, message]);
    expect(both({ graph: roundRobin(trio).toDict(), context_vars: null })).toEqual([message, message]);
  });

  it('requires at least 2 participants', () => {
    const meta = workflowMetadata({ participants: ['alice'], knobs: { graph: roundRobin(['alice']).toDict() } });
    expect(rejection(() => adapter.validateCreate(meta)).message).toBe(
      'workflow requires at least 2 participants, got 1',
    );
  });

  it('loads custom names through the registry it was given', () => {
    const registry = createTransitionRegistry();
    registry.registerCondition('sometimes', () => new Always());
    const graph = { initial_speaker: 'alice', transitions: [{ when: { name: 'sometimes' }, then: { name: 'stay' } }] };
    const meta = workflowMetadata({ participants: trio, knobs: { graph } });
    expect(() => new WorkflowAdapter({ registry }).validateCreate(meta)).not.toThrow();
    expect(rejection(() => adapter.validateCreate(meta)).message).toBe(
      "invalid workflow graph: no transition condition registered for 'sometimes'",
    );
  });
});

describe('WorkflowAdapter.validateSend', () => {
  const state = adapter.initialState(rrMeta);

  it('rejects a turn from anyone but the expected speaker', () => {
    expect(rejection(() => adapter.validateSend(rrMeta, textEnv('bob', 'hi'), state)).message).toBe(
      "workflow 'c1' expects 'alice' to speak, got 'bob'",
    );
    expect(() => adapter.validateSend(rrMeta, textEnv('alice', 'hi'), state)).not.toThrow();
  });

  it('accepts context changes from any participant out of turn, and none from outsiders', () => {
    expect(() => adapter.validateSend(rrMeta, contextEnv('carol', { set: { k: 1 } }), state)).not.toThrow();
    expect(rejection(() => adapter.validateSend(rrMeta, contextEnv('eve', { set: { k: 1 } }), state)).message).toBe(
      "workflow 'c1' only accepts EV_CONTEXT_SET from participants, got 'eve'",
    );
  });

  it('rejects a handoff to an agent that is not a participant', () => {
    const env = packetEnv('alice', { routing: { kind: 'handoff', tool: 'x', target: 'mallory' }, body: '' });
    expect(rejection(() => adapter.validateSend(rrMeta, env, state)).message).toBe(
      "workflow 'c1' handoff target 'mallory' is not a participant",
    );
    const ok = packetEnv('alice', { routing: { kind: 'handoff', tool: 'x', target: 'carol' }, body: '' });
    expect(() => adapter.validateSend(rrMeta, ok, state)).not.toThrow();
  });

  it('rejects malformed packets and context changes that fold would ignore', () => {
    const badPacket = packetEnv('alice', { routing: { kind: 'teleport' } });
    expect(rejection(() => adapter.validateSend(rrMeta, badPacket, state)).message).toMatch(
      /^workflow 'c1' got a malformed EV_PACKET: routing\.kind: /,
    );
    expect(rejection(() => adapter.validateSend(rrMeta, contextEnv('bob', { set: 'x' }), state)).message).toBe(
      "workflow 'c1' got a malformed EV_CONTEXT_SET: set: Invalid input: expected record, received string",
    );
  });

  it('lets anyone speak once nobody is expected, and ignores other event types', () => {
    const done: WorkflowState = { ...state, expected_next_speaker: null };
    expect(() => adapter.validateSend(rrMeta, textEnv('bob', 'late'), done)).not.toThrow();
    const custom = createEnvelope({ channel_id: CID, sender_id: 'eve', event_type: 'acme.note' });
    expect(() => adapter.validateSend(rrMeta, custom, state)).not.toThrow();
  });
});
