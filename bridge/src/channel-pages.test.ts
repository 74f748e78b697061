import type { HubCallOptions } from '@ag2net/client';
import { ChannelMetadataSchema, type ChannelMetadata, type HubRequest, type HubResponse } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { allChannels, channelsPage, type ChannelLister } from './channel-pages.js';

function channel(id: string): ChannelMetadata {
  return ChannelMetadataSchema.parse({
    channel_id: id,
    manifest: { type: 'conversation', version: 1 },
    creator_id: 'a',
    participants: [],
    state: 'active',
    created_at: '2026-01-01T00:00:00.000Z',
  });
}

/** A hub whose partition k holds `byPartition[k]`, answering pages of `limit` with a numeric cursor. */
function lister(byPartition: readonly (readonly string[])[]): ChannelLister & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    partitions: () => Promise.resolve(byPartition.length),
    call(_op: 'listChannels', request: HubRequest<'listChannels'>, options?: HubCallOptions) {
      const k = options?.partition ?? 0;
      asked.push(`${k}@${request.cursor ?? '-'}/${request.limit ?? 50}`);
      const ids = byPartition[k] ?? [];
      const from = Number(request.cursor ?? 0);
      const to = Math.min(ids.length, from + (request.limit ?? 50));
      const page: HubResponse<'listChannels'> = {
        channels: ids.slice(from, to).map(channel),
        next_cursor: to < ids.length ? String(to) : null,
      };
      return Promise.resolve(page);
    },
  };
}

describe('channelsPage', () => {
  it("passes one partition's page and cursor through unchanged", async () => {
    const hub = lister([['c1', 'c2', 'c3']]);
    const page = await channelsPage(hub, { limit: 2, cursor: null });
    expect([page.channels.map((c) => c.channel_id), page.next_cursor]).toEqual([['c1', 'c2'], '2']);
    expect(hub.asked).toEqual(['0@-/2']);
  });

  it('walks the partitions in order, page by page, and its cursors list every channel once', async () => {
    const hub = lister([['a1', 'a2', 'a3'], [], ['c1', 'c2']]);
    const first = await channelsPage(hub, { limit: 2, cursor: null });
    expect([first.channels.map((c) => c.channel_id), first.next_cursor]).toEqual([['a1', 'a2'], '0:2']);
    const second = await channelsPage(hub, { limit: 2, cursor: first.next_cursor });
    expect([second.channels.map((c) => c.channel_id), second.next_cursor]).toEqual([['a3', 'c1'], '2:1']);
    const third = await channelsPage(hub, { limit: 2, cursor: second.next_cursor });
    expect([third.channels.map((c) => c.channel_id), third.next_cursor]).toEqual([['c2'], null]);
    expect((await allChannels(hub, {}, 100)).map((c) => c.channel_id)).toEqual(['a1', 'a2', 'a3', 'c1', 'c2']);
  });

  it('refuses a cursor it did not give', async () => {
    const hub = lister([['a1'], ['b1']]);
    for (const cursor of ['7', '5:x', 'x:1']) {
      await expect(channelsPage(hub, { cursor })).rejects.toThrow(
        'cursor is not one this bridge gave: list again from the first page',
      );
    }
  });
});
