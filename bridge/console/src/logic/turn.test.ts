import { describe, expect, it } from 'vitest';
import { stateAfterLog, turnLabel, whoseTurn } from './turn.js';

const participants = [
  { agent_id: 'me', role: 'initiator', order: 0 },
  { agent_id: 'ex', role: 'respondent', order: 1 },
];
const channel = (type: string, state = 'active') => ({ state, participants, manifest: { type } });
const nameOf = (id: string): string => ({ ex: 'expert', tr: 'triage' })[id] ?? id;

describe('whoseTurn', () => {
  it('consulting: the initiator asks, the respondent answers, then nobody', () => {
    const c = channel('consulting');
    const state = { initiator_sent: false, respondent_replied: false, last_envelope_id: null };
    expect(whoseTurn(c, state)).toEqual({ kind: 'agent', agentId: 'me' });
    expect(whoseTurn(c, { ...state, initiator_sent: true })).toEqual({ kind: 'agent', agentId: 'ex' });
    expect(whoseTurn(c, { ...state, initiator_sent: true, respondent_replied: true })).toEqual({
      kind: 'none',
      why: 'answered',
    });
  });

  it('discussion and workflow: expected_next_speaker; a terminated workflow has none', () => {
    expect(whoseTurn(channel('discussion'), { expected_next_speaker: 'ex' })).toEqual({ kind: 'agent', agentId: 'ex' });
    expect(whoseTurn(channel('workflow'), { expected_next_speaker: 'tr' })).toEqual({ kind: 'agent', agentId: 'tr' });
    expect(whoseTurn(channel('workflow'), { expected_next_speaker: null })).toEqual({ kind: 'none', why: 'finished' });
  });

  it('conversation: anyone; ended, pending and unseen states: nobody', () => {
    expect(whoseTurn(channel('conversation'), { turn_count: 3 })).toEqual({ kind: 'anyone' });
    expect(whoseTurn(channel('consulting', 'closed'), { initiator_sent: false })).toEqual({
      kind: 'none',
      why: 'closed',
    });
    expect(whoseTurn(channel('discussion', 'pending'), null)).toEqual({ kind: 'none', why: 'waiting for invitees' });
    expect(whoseTurn(channel('discussion'), null)).toEqual({ kind: 'none', why: 'unknown' });
    expect(whoseTurn(channel('custom'), { expected_next_speaker: 'ex' })).toEqual({ kind: 'agent', agentId: 'ex' });
  });
});

describe('turnLabel', () => {
  it('says you, a name, anyone, or why nobody', () => {
    expect(turnLabel({ kind: 'agent', agentId: 'me' }, nameOf, 'me')).toBe('you');
    expect(turnLabel({ kind: 'agent', agentId: 'ex' }, nameOf, 'me')).toBe('expert');
    expect(turnLabel({ kind: 'anyone' }, nameOf, 'me')).toBe('anyone');
    expect(turnLabel({ kind: 'none', why: 'closed' }, nameOf, null)).toBe('— (closed)');
  });
});

describe('stateAfterLog', () => {
  const text = (sender: string) => ({ event_type: 'ag2.msg.text', sender_id: sender });
  it("consulting: the log's ask and answer move a state read before them", () => {
    const c = channel('consulting');
    const before = { initiator_sent: false, respondent_replied: false };
    expect(whoseTurn(c, stateAfterLog(c, before, [text('me')]))).toEqual({ kind: 'agent', agentId: 'ex' });
    expect(whoseTurn(c, stateAfterLog(c, before, [text('me'), text('ex')]))).toEqual({ kind: 'none', why: 'answered' });
    expect(stateAfterLog(c, null, [])).toBeNull();
  });

  it('other adapters: the state as read', () => {
    const state = { expected_next_speaker: 'ex' };
    expect(stateAfterLog(channel('discussion'), state, [text('ex')])).toBe(state);
  });
});
