import { ChannelMetadataSchema, type ChannelMetadata } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { createDefaultAdapterRegistry } from './default-registry.js';
import { whoseTurn } from './whose-turn.js';

const adapters = createDefaultAdapterRegistry();

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
    const initial = { initiator_sent: false, respondent_replied: false, last_envelope_id: null };
    expect(whoseTurn(channel('consulting'), initial, adapters)).toEqual({ kind: 'agent', agentId: 'ini' });
    const asked = { ...initial, initiator_sent: true };
    expect(whoseTurn(channel('consulting'), asked, adapters)).toEqual({ kind: 'agent', agentId: 'res' });
    const answered = { ...asked, respondent_replied: true };
    expect(whoseTurn(channel('consulting'), answered, adapters)).toEqual({ kind: 'none', why: 'answered' });
  });

  it('conversation is anyone; discussion and workflow name the speaker their adapter expects', () => {
    expect(whoseTurn(channel('conversation'), null, adapters)).toEqual({ kind: 'anyone' });
    expect(whoseTurn(channel('discussion'), { expected_next_speaker: 'res' }, adapters)).toEqual({
      kind: 'agent',
      agentId: 'res',
    });
    expect(whoseTurn(channel('workflow'), { expected_next_speaker: null }, adapters)).toEqual({
      kind: 'none',
      why: 'finished',
    });
  });

  it('an ended or pending channel, an unreadable state or an unknown protocol is nobody with the reason', () => {
    expect(whoseTurn(channel('conversation', 'closed'), null, adapters)).toEqual({ kind: 'none', why: 'closed' });
    expect(whoseTurn(channel('consulting', 'closing'), {}, adapters)).toEqual({ kind: 'none', why: 'closing' });
    expect(whoseTurn(channel('consulting', 'pending'), {}, adapters)).toEqual({
      kind: 'none',
      why: 'waiting for invitees',
    });
    expect(whoseTurn(channel('discussion'), null, adapters)).toEqual({ kind: 'none', why: 'unknown' });
    expect(whoseTurn(channel('custom'), {}, adapters)).toEqual({ kind: 'none', why: 'unknown protocol' });
  });
});
