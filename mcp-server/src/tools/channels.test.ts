import { ChannelMetadataSchema } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { newestFirst } from './channels.js';

const channel = (id: string) =>
  ChannelMetadataSchema.parse({
    channel_id: id,
    manifest: { type: 'conversation' },
    creator_id: 'a',
    participants: [],
    state: 'active',
    created_at: '2026-01-01T00:00:00.000Z',
  });

describe('newestFirst', () => {
  it('keeps the newest of a list in creation order, newest first', () => {
    const listed = ['c1', 'c2', 'c3', 'c4'].map(channel);
    expect(newestFirst(listed, 2).map((c) => c.channel_id)).toEqual(['c4', 'c3']);
    expect(newestFirst(listed, 10).map((c) => c.channel_id)).toEqual(['c4', 'c3', 'c2', 'c1']);
  });
});
