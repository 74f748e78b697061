import { describe, expect, it } from 'vitest';
import { ChannelMetadataSchema, ChannelState, EnvelopeSchema, type Envelope } from '@ag2net/protocol';
import { foldEnvelope, foldEnvelopes, foldPreview, isEnded, mergeChannel } from './live.js';

const channel = ChannelMetadataSchema.parse({
  channel_id: 'c1',
  manifest: { type: 'consulting' },
  creator_id: 'me',
  participants: [
    { agent_id: 'me', role: 'initiator', order: 0 },
    { agent_id: 'ex', role: 'respondent', order: 1 },
  ],
  state: 'pending',
  created_at: '2026-01-01T12:00:00.000Z',
  expires_at: '2026-01-01T14:00:00.000Z',
  pending_acks: ['ex'],
});

function envelope(sequence: number, event_type: string, sender_id: string, event_data = {}): Envelope {
  return EnvelopeSchema.parse({
    channel_id: 'c1',
    sender_id,
    event_type,
    event_data,
    envelope_id: `e${sequence}`,
    created_at: `2026-01-01T12:00:0${sequence}.000Z`,
    sequence,
  });
}

describe('foldEnvelope', () => {
  it('acks, opens, then closes a channel from its log, with the close reason and time', () => {
    const acked = foldEnvelope(channel, envelope(2, 'ag2.channel.invite.ack', 'ex'));
    expect([acked.state, acked.pending_acks]).toEqual(['pending', []]);
    const opened = foldEnvelope(acked, envelope(3, 'ag2.channel.opened', 'me'));
    expect(opened.state).toBe('active');
    const closed = foldEnvelope(opened, envelope(5, 'ag2.channel.closed', 'me', { reason: 'consulting_complete' }));
    expect([closed.state, closed.close_reason, closed.closed_at]).toEqual([
      'closed',
      'consulting_complete',
      '2026-01-01T12:00:05.000Z',
    ]);
    expect(isEnded(closed.state)).toBe(true);
  });

  it('never moves a channel back: an opening folded into a closed channel leaves it closed', () => {
    const closed = { ...channel, state: ChannelState.Closed, close_reason: 'done' };
    expect(foldEnvelope(closed, envelope(3, 'ag2.channel.opened', 'me'))).toBe(closed);
    expect(foldEnvelope(closed, envelope(4, 'ag2.channel.expired', 'me', { reason: 'ttl_expired' }))).toBe(closed);
  });

  it('folds a log in sequence order whatever order it arrived in', () => {
    const folded = foldEnvelopes(channel, [
      envelope(4, 'ag2.channel.expired', 'me', { reason: 'ttl_expired' }),
      envelope(3, 'ag2.channel.opened', 'me'),
    ]);
    expect([folded.state, folded.close_reason]).toEqual(['expired', 'ttl_expired']);
  });
});

describe('mergeChannel', () => {
  it('takes a read unless it is behind the log in the channel life', () => {
    const closed = {
      ...channel,
      state: ChannelState.Closed,
      close_reason: 'done',
      closed_at: '2026-01-01T12:01:00.000Z',
    };
    const staleRead = { ...channel, state: ChannelState.Active, labels: { intent: 'new label' } };
    expect(mergeChannel(closed, staleRead)).toEqual({
      ...staleRead,
      state: ChannelState.Closed,
      close_reason: 'done',
      closed_at: closed.closed_at,
      pending_acks: channel.pending_acks,
    });
    const fresh = { ...closed, close_reason: 'done later' };
    expect(mergeChannel({ ...channel, state: ChannelState.Active }, fresh)).toBe(fresh);
    expect(mergeChannel(undefined, staleRead)).toBe(staleRead);
  });
});

describe('foldPreview', () => {
  it('keeps the last message and the last activity; an older delivery changes nothing', () => {
    const first = foldPreview(undefined, envelope(6, 'ag2.msg.text', 'ex', { text: 'hello' }));
    expect(first).toEqual({
      last_sequence: 6,
      last_activity_at: '2026-01-01T12:00:06.000Z',
      last_message: {
        sequence: 6,
        sender_id: 'ex',
        event_type: 'ag2.msg.text',
        text: 'hello',
        created_at: '2026-01-01T12:00:06.000Z',
      },
    });
    const closed = foldPreview(first, envelope(7, 'ag2.channel.closed', 'me', { reason: 'done' }));
    expect([closed.last_sequence, closed.last_activity_at, closed.last_message]).toEqual([
      7,
      '2026-01-01T12:00:07.000Z',
      first.last_message,
    ]);
    expect(foldPreview(closed, envelope(5, 'ag2.msg.text', 'me', { text: 'older' }))).toBe(closed);
  });
});
