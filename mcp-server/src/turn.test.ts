import { ChannelMetadataSchema, type ChannelMetadata } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { whoseTurn } from './turn.js';

function channel(type: string, state = 'active'): ChannelMetadata {
  return ChannelMetadataSchema.parse({
    channel_id: 'c1',
    manifest: { type },
    creator_id: 'ini',
    participants: [
      { agent_id: 'ini', role: 'initiator', order: 0 },
      { agent_id: 'res', role: 'respondent', order: 1 },
    ],
    state,
    created_at: '2026-01-01T00:00:00.000Z',
  });
}

describe('whoseTurn', () => {
  it('consulting: the initiator asks, then the respondent answers, then nobody', () => {
    expect(whoseTurn(channel('consulting'), {})).toEqual({ kind: 'agent', agent_id: 'ini' });
    expect(whoseTurn(channel('consulting'), { initiator_sent: true })).toEqual({ kind: 'agent', agent_id: 'res' });
    expect(whoseTurn(channel('consulting'), { initiator_sent: true, respondent_replied: true })).toEqual({
      kind: 'none',
      why: 'answered',
    });
  });

  it('conversation is anyone; discussion and workflow follow expected_next_speaker', () => {
    expect(whoseTurn(channel('conversation'), null)).toEqual({ kind: 'anyone' });
    expect(whoseTurn(channel('discussion'), { expected_next_speaker: 'res' })).toEqual({
      kind: 'agent',
      agent_id: 'res',
    });
    expect(whoseTurn(channel('workflow'), { expected_next_speaker: null })).toEqual({ kind: 'none', why: 'finished' });
  });

  it('an ended or pending channel, or an unreadable state, is nobody with the reason', () => {
    expect(whoseTurn(channel('conversation', 'closed'), null)).toEqual({ kind: 'none', why: 'closed' });
    expect(whoseTurn(channel('consulting', 'pending'), {})).toEqual({ kind: 'none', why: 'waiting for invitees' });
    expect(whoseTurn(channel('discussion'), null)).toEqual({ kind: 'none', why: 'unknown' });
  });
});
