import { describe, expect, it } from 'vitest';
import { channelMatches, searchTerms } from './search.js';

const names: Record<string, string> = { me: 'ann', ex: 'expert' };
const nameOf = (id: string): string => names[id] ?? id;
const channel = {
  channel_id: '01M8ESQCK7XQ7KZ1Z1Y8922R73',
  labels: { intent: 'A question about consensus' },
  manifest: { type: 'consulting' },
  participants: [
    { agent_id: 'me', role: 'initiator', order: 0 },
    { agent_id: 'ex', role: 'respondent', order: 1 },
  ],
};
const preview = {
  last_sequence: 7,
  last_activity_at: null,
  last_message: {
    sequence: 6,
    sender_id: 'ex',
    event_type: 'ag2.msg.text',
    text: 'Raft elects a leader',
    created_at: '',
  },
};

describe('channelMatches', () => {
  it('finds a channel by its intent, type, id, a participant and its last message, every term anywhere', () => {
    const match = (q: string) => channelMatches(channel, searchTerms(q), { nameOf, preview });
    expect(['', '  ', 'CONSENSUS', 'consult', '922r73', 'expert', 'ann question', 'raft leader'].map(match)).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(['billing', 'consensus billing', 'workflow'].map(match)).toEqual([false, false, false]);
    expect(channelMatches(channel, searchTerms('raft'), { nameOf, preview: undefined })).toBe(false);
  });
});
