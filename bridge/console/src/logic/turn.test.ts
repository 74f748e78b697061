import { ChannelMetadataSchema, EnvelopeSchema, type ChannelMetadata, type Envelope } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { channelTurn, stateAfterLog, turnLabel } from './turn.js';

function channel(type: string, state = 'active'): ChannelMetadata {
  return ChannelMetadataSchema.parse({
    channel_id: 'c1',
    manifest: { type },
    creator_id: 'me',
    participants: [
      { agent_id: 'me', role: 'initiator', order: 0 },
      { agent_id: 'ex', role: 'respondent', order: 1 },
    ],
    state,
    created_at: '2026-01-01T00:00:00.000Z',
  });
}

function text(sender: string, envelopeId: string): Envelope {
  return EnvelopeSchema.parse({
    channel_id: 'c1',
    sender_id: sender,
    event_type: 'ag2.msg.text',
    event_data: { text: 'hi' },
    envelope_id: envelopeId,
  });
}
const nameOf = (id: string): string => ({ ex: 'expert', tr: 'triage' })[id] ?? id;

describe('channelTurn', () => {
  it("reads the consulting adapter's turn: the initiator asks, the respondent answers, then nobody", () => {
    const c = channel('consulting');
    const state = { initiator_sent: false, respondent_replied: false, last_envelope_id: null };
    expect(channelTurn(c, state)).toEqual({ kind: 'agent', agentId: 'me' });
    expect(channelTurn(c, { ...state, initiator_sent: true })).toEqual({ kind: 'agent', agentId: 'ex' });
    expect(channelTurn(c, { ...state, initiator_sent: true, respondent_replied: true })).toEqual({
      kind: 'none',
      why: 'answered',
    });
  });

  it('conversation is anyone; a pending channel or an unseen state is nobody; an unknown protocol is nobody', () => {
    expect(channelTurn(channel('conversation'), { turn_count: 3 })).toEqual({ kind: 'anyone' });
    expect(channelTurn(channel('discussion', 'pending'), null)).toEqual({ kind: 'none', why: 'waiting for invitees' });
    expect(channelTurn(channel('discussion'), null)).toEqual({ kind: 'none', why: 'unknown' });
    expect(channelTurn(channel('custom'), { expected_next_speaker: 'ex' })).toEqual({
      kind: 'none',
      why: 'unknown protocol',
    });
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
  it("consulting: the log's ask and answer move a state read before them", () => {
    const c = channel('consulting');
    const before = { initiator_sent: false, respondent_replied: false, last_envelope_id: null };
    expect(channelTurn(c, stateAfterLog(c, before, [text('me', 'e1')]))).toEqual({ kind: 'agent', agentId: 'ex' });
    expect(channelTurn(c, stateAfterLog(c, before, [text('me', 'e1'), text('ex', 'e2')]))).toEqual({
      kind: 'none',
      why: 'answered',
    });
    expect(stateAfterLog(c, null, [])).toBeNull();
  });

  it('discussion: only envelopes after the one that gave the speaker the turn are folded', () => {
    const c = channel('discussion');
    const afterAsk = {
      participant_order: ['me', 'ex'],
      expected_next_speaker: 'ex',
      last_speaker_id: 'me',
      last_envelope_id: 'e1',
      turn_count: 1,
    };
    const log = [text('me', 'e1'), text('ex', 'e2')];
    expect(channelTurn(c, stateAfterLog(c, afterAsk, log))).toEqual({ kind: 'agent', agentId: 'me' });
    expect(stateAfterLog(c, afterAsk, [text('me', 'e1')])).toBe(afterAsk);
  });

  it('a state whose turn came from an envelope this log does not hold is returned as read', () => {
    const c = channel('consulting');
    const asked = { initiator_sent: true, respondent_replied: false, last_envelope_id: 'hidden' };
    expect(stateAfterLog(c, asked, [text('ex', 'e2')])).toBe(asked);
  });
});
