import { describe, expect, it } from 'vitest';
import { AgentTarget, RevertToInitiatorTarget, RoundRobinTarget, StayTarget, TerminateTarget } from './targets.js';
import { WorkflowGraphError } from './errors.js';
import { stateWith, textEnv } from '../../test/workflow-helpers.js';

const order = ['alice', 'bob', 'carol'];

describe('transition targets', () => {
  it('AgentTarget hands the turn to its agent', () => {
    expect(new AgentTarget('bob').resolve()).toEqual({ nextSpeaker: 'bob', closeReason: '' });
  });

  it('RoundRobinTarget picks the participant after the last speaker and wraps around', () => {
    const target = new RoundRobinTarget();
    const after = (last: string) =>
      target.resolve(stateWith({ participant_order: order, last_speaker_id: last }), textEnv(last, 'x'));
    expect(after('alice')).toEqual({ nextSpeaker: 'bob', closeReason: '' });
    expect(after('carol')).toEqual({ nextSpeaker: 'alice', closeReason: '' });
  });

  it('RoundRobinTarget anchors on the sender when nobody spoke yet, and restarts at order[0] for an outsider', () => {
    const target = new RoundRobinTarget();
    const state = stateWith({ participant_order: order });
    expect(target.resolve(state, textEnv('bob', 'x')).nextSpeaker).toBe('carol');
    expect(target.resolve(state, textEnv('zed', 'x')).nextSpeaker).toBe('alice');
  });

  it('RoundRobinTarget ends the workflow with no_participants when the order is empty', () => {
    expect(new RoundRobinTarget().resolve(stateWith({}), textEnv('alice', 'x'))).toEqual({
      nextSpeaker: null,
      closeReason: 'no_participants',
    });
  });

  it('StayTarget keeps the last speaker, or the sender before anyone spoke', () => {
    const target = new StayTarget();
    expect(target.resolve(stateWith({ last_speaker_id: 'bob' }), textEnv('alice', 'x')).nextSpeaker).toBe('bob');
    expect(target.resolve(stateWith({}), textEnv('alice', 'x')).nextSpeaker).toBe('alice');
  });

  it('RevertToInitiatorTarget goes back to the channel creator', () => {
    expect(new RevertToInitiatorTarget().resolve(stateWith({ creator_id: 'mgr' }))).toEqual({
      nextSpeaker: 'mgr',
      closeReason: '',
    });
  });

  it('TerminateTarget ends the workflow with its reason, after_work by default', () => {
    expect(new TerminateTarget('done').resolve()).toEqual({ nextSpeaker: null, closeReason: 'done' });
    expect(new TerminateTarget().resolve()).toEqual({ nextSpeaker: null, closeReason: 'after_work' });
  });

  it('targets carry AG2 registry names and snake_case args', () => {
    const targets = [
      new AgentTarget('bob'),
      new RoundRobinTarget(),
      new StayTarget(),
      new RevertToInitiatorTarget(),
      new TerminateTarget('done'),
    ];
    expect(targets.map((t) => [t.name, t.args()])).toEqual([
      ['agent', { agent_id: 'bob' }],
      ['round_robin', {}],
      ['stay', {}],
      ['revert_to_initiator', {}],
      ['terminate', { reason: 'done' }],
    ]);
  });

  it('fromArgs builds targets from args and applies the terminate default', () => {
    expect(AgentTarget.fromArgs({ agent_id: 'bob' })).toEqual(new AgentTarget('bob'));
    expect(TerminateTarget.fromArgs({})).toEqual(new TerminateTarget('after_work'));
    expect(StayTarget.fromArgs({})).toEqual(new StayTarget());
  });

  it('fromArgs rejects missing, mistyped and unknown args with a WorkflowGraphError', () => {
    expect(() => AgentTarget.fromArgs({})).toThrow(
      new WorkflowGraphError(
        "invalid args for transition target 'agent': agent_id: Invalid input: expected string, received undefined",
      ),
    );
    expect(() => TerminateTarget.fromArgs({ reason: 7 })).toThrow(
      "invalid args for transition target 'terminate': reason: Invalid input: expected string, received number",
    );
    expect(() => RoundRobinTarget.fromArgs({ step: 2 })).toThrow(
      'invalid args for transition target \'round_robin\': (root): Unrecognized key: "step"',
    );
    expect(() => RevertToInitiatorTarget.fromArgs({ x: 1 })).toThrow(WorkflowGraphError);
  });
});
