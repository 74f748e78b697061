import { EV_EXPECTATION_VIOLATED, createEnvelope, type Envelope } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { channelFor, expectProtocolError, foldAll, text } from '../test/helpers.js';
import { admitAll, packetEnv, textEnv, workflowMetadata } from '../test/workflow-helpers.js';
import { DiscussionAdapter } from './discussion.js';
import { skipHidden } from './hide.js';
import { WorkflowAdapter } from './workflow/adapter.js';
import { roundRobin } from './workflow/factories.js';

/** The hub's violation record with `on_violation` (default `hide`) for `violators`. */
function record(violators: readonly string[], onViolation = 'hide', id = 'v1'): Envelope {
  return createEnvelope({
    channel_id: 'c1',
    sender_id: 'alice',
    audience: [...violators],
    event_type: EV_EXPECTATION_VIOLATED,
    event_data: {
      expectation: 'turn_within',
      violators: [...violators],
      detail: {},
      on_violation: onViolation,
      expectation_index: 1,
      scope: 'turn:1',
    },
    envelope_id: id,
  });
}

describe('skipHidden', () => {
  const order = ['a', 'b', 'c', 'd'];

  it('keeps a pick that is not hidden', () => {
    expect(skipHidden(order, ['b'], 'c')).toBe('c');
    expect(skipHidden(order, undefined, 'b')).toBe('b');
  });

  it('moves a hidden pick to the next participant in order who is not hidden, wrapping around', () => {
    expect(skipHidden(order, ['b', 'c'], 'b')).toBe('d');
    expect(skipHidden(order, ['d', 'a'], 'd')).toBe('b');
  });

  it('keeps the pick when everyone is hidden', () => {
    expect(skipHidden(order, order, 'c')).toBe('c');
  });
});

describe('DiscussionAdapter hide rule', () => {
  const adapter = new DiscussionAdapter();
  const meta = channelFor(adapter, { creator: 'alice', others: ['bob', 'carol', 'dave'] });

  it('passes the turn of a hidden expected speaker to the next participant at once', () => {
    const state = foldAll(adapter, meta, [record(['alice'])]);
    expect(state).toEqual({
      participant_order: ['alice', 'bob', 'carol', 'dave'],
      expected_next_speaker: 'bob',
      last_speaker_id: null,
      last_envelope_id: null,
      turn_count: 0,
      hidden: ['alice'],
    });
    expect(adapter.expectedNext(meta, state)).toEqual({ agentId: 'bob', triggeringEnvelopeId: null });
  });

  it('skips hidden participants in the rotation', () => {
    const state = foldAll(adapter, meta, [record(['carol']), text('alice', 'a', 'e1'), text('bob', 'b', 'e2')]);
    expect(state).toMatchObject({ expected_next_speaker: 'dave', turn_count: 2, hidden: ['carol'] });
  });

  it('lets a hidden participant speak out of turn, which un-hides it and passes the turn on from it', () => {
    const hidden = foldAll(adapter, meta, [record(['alice'])]);
    const back = text('alice', 'sorry, here', 'e1');
    expect(() => adapter.validateSend(meta, back, hidden)).not.toThrow();
    const state = adapter.fold(back, hidden);
    expect(state).toEqual({
      participant_order: ['alice', 'bob', 'carol', 'dave'],
      expected_next_speaker: 'bob',
      last_speaker_id: 'alice',
      last_envelope_id: 'e1',
      turn_count: 1,
    });
  });

  it('still refuses a participant who is neither expected nor hidden, with the usual message', () => {
    const state = foldAll(adapter, meta, [record(['alice'])]);
    expectProtocolError(
      () => adapter.validateSend(meta, text('carol', 'me', 'x'), state),
      "discussion channel 'c1' expects 'bob' to speak, got 'carol'",
    );
  });

  it('keeps the turn with the pick when everyone is hidden; whoever speaks first is the only one left in the rotation', () => {
    const two = channelFor(adapter, { creator: 'alice', others: ['bob'] });
    const state = foldAll(adapter, two, [record(['alice']), record(['bob'], 'hide', 'v2')]);
    expect(state).toMatchObject({ expected_next_speaker: 'bob', hidden: ['alice', 'bob'] });
    expect(() => adapter.validateSend(two, text('alice', 'a', 'e1'), state)).not.toThrow();
    expect(adapter.fold(text('alice', 'a', 'e1'), state)).toMatchObject({
      expected_next_speaker: 'alice',
      hidden: ['bob'],
    });
  });

  it('ignores violation records of other handlers and violators outside the channel', () => {
    const start = adapter.initialState(meta);
    expect(adapter.fold(record(['alice'], 'warn'), start)).toBe(start);
    expect(adapter.fold(record(['mallory']), start)).toBe(start);
  });

  it('refolds the same state from the log, also after a JSON round trip', () => {
    const log = [text('alice', 'a', 'e1'), record(['bob']), text('carol', 'c', 'e2'), text('bob', 'b', 'e3')];
    const live = foldAll(adapter, meta, log);
    expect(foldAll(adapter, meta, JSON.parse(JSON.stringify(log)) as Envelope[])).toEqual(live);
    expect(live).toEqual({
      participant_order: ['alice', 'bob', 'carol', 'dave'],
      expected_next_speaker: 'carol',
      last_speaker_id: 'bob',
      last_envelope_id: 'e3',
      turn_count: 3,
    });
  });
});

describe('WorkflowAdapter hide rule', () => {
  const adapter = new WorkflowAdapter();
  const trio = ['alice', 'bob', 'carol'];
  const meta = workflowMetadata({ participants: trio, knobs: { graph: roundRobin(trio).toDict() } });

  it('passes the turn of a hidden expected speaker to the next participant in order', () => {
    const state = adapter.fold(record(['alice']), adapter.initialState(meta));
    expect(state).toMatchObject({ expected_next_speaker: 'bob', hidden: ['alice'], turn_count: 0 });
  });

  it('moves a graph pick that is hidden to the next participant who is not', () => {
    const { state: plain } = admitAll(adapter, meta, [textEnv('alice', 'a')]);
    expect(plain.expected_next_speaker).toBe('bob');
    const hidden = adapter.fold(record(['bob']), adapter.initialState(meta));
    const next = adapter.fold(textEnv('alice', 'a'), hidden);
    expect(next).toMatchObject({ expected_next_speaker: 'carol', hidden: ['bob'], turn_count: 1 });
  });

  it('lets a hidden participant take a turn out of turn, un-hiding it and routing as usual', () => {
    const hidden = adapter.fold(record(['carol']), adapter.initialState(meta));
    const back = packetEnv('carol', { routing: { kind: 'handoff', target: 'alice' }, body: 'back' });
    expect(() => adapter.validateSend(meta, back, hidden)).not.toThrow();
    const state = adapter.fold(back, hidden);
    expect(state.expected_next_speaker).toBe('alice');
    expect(state.hidden).toBeUndefined();
    expect(adapter.onAccepted(meta, back, state)).toEqual({ nextState: null, autoCloseReason: '' });
  });

  it('never ends the workflow by hiding: with everyone hidden the pick stays expected', () => {
    let state = adapter.initialState(meta);
    for (const [i, who] of trio.entries()) state = adapter.fold(record([who], 'hide', `v${i}`), state);
    expect(state).toMatchObject({ expected_next_speaker: 'carol', hidden: trio });
  });

  it('refuses a participant who is neither expected nor hidden, with the usual message', () => {
    const state = adapter.fold(record(['alice']), adapter.initialState(meta));
    expectProtocolError(
      () => adapter.validateSend(meta, textEnv('carol', 'c'), state),
      "workflow 'c1' expects 'bob' to speak, got 'carol'",
    );
  });
});
