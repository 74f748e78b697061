import { ChannelMetadataSchema, type ChannelMetadata } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { whoseTurn } from './turn.js';

const consulting: ChannelMetadata = ChannelMetadataSchema.parse({
  channel_id: 'c1',
  manifest: { type: 'consulting' },
  creator_id: 'ini',
  participants: [
    { agent_id: 'ini', role: 'initiator', order: 0 },
    { agent_id: 'res', role: 'respondent', order: 1 },
  ],
  state: 'active',
  created_at: '2026-01-01T00:00:00.000Z',
});

describe('whoseTurn', () => {
  it("answers the adapter's turn with the wire's agent_id, and anyone or nobody as the adapter says them", () => {
    expect(whoseTurn(consulting, { initiator_sent: true })).toEqual({ kind: 'agent', agent_id: 'res' });
    expect(whoseTurn({ ...consulting, state: 'closed' }, null)).toEqual({ kind: 'none', why: 'closed' });
    const chat = { ...consulting, manifest: { ...consulting.manifest, type: 'conversation' } };
    expect(whoseTurn(chat, null)).toEqual({ kind: 'anyone' });
  });
});
