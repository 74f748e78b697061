import type { HubCallOptions } from '@ag2net/client';
import { InvalidRequestError, type HubRequest, type HubResponse } from '@ag2net/protocol';

/** A hub connection that lists channels: a partition at a time on a deployment of several. */
export interface ChannelLister {
  call(
    op: 'listChannels',
    request: HubRequest<'listChannels'>,
    options?: HubCallOptions,
  ): Promise<HubResponse<'listChannels'>>;
  partitions(): Promise<number>;
}

/**
 * One page of the channels `hub` may list, whatever the deployment's partition count. With one partition it is the
 * hub's own page and cursor. With several, each partition lists its own channels: the page walks them from the
 * partition the cursor names (`<partition>:<the partition's cursor>`), and its `next_cursor` names where the next
 * page goes on, so that following the cursors lists every channel once.
 */
export async function channelsPage(
  hub: ChannelLister,
  filter: HubRequest<'listChannels'>,
): Promise<HubResponse<'listChannels'>> {
  const partitions = await hub.partitions();
  if (partitions === 1) return hub.call('listChannels', filter);
  const limit = filter.limit ?? 50;
  let { partition, cursor } = partitionCursor(filter.cursor ?? null, partitions);
  const channels: HubResponse<'listChannels'>['channels'] = [];
  while (partition < partitions) {
    const page = await hub.call('listChannels', { ...filter, limit: limit - channels.length, cursor }, { partition });
    channels.push(...page.channels);
    if (page.next_cursor === null) {
      partition += 1;
      cursor = null;
    } else cursor = page.next_cursor;
    if (channels.length >= limit) break;
  }
  const next = partition >= partitions ? null : `${partition}:${cursor ?? ''}`;
  return { channels, next_cursor: next };
}

/** Every channel `hub` may list, up to `limit`, following the pages. */
export async function allChannels(
  hub: ChannelLister,
  filter: Omit<HubRequest<'listChannels'>, 'cursor' | 'limit'>,
  limit: number,
): Promise<HubResponse<'listChannels'>['channels']> {
  const out: HubResponse<'listChannels'>['channels'] = [];
  let cursor: string | null = null;
  do {
    const page: HubResponse<'listChannels'> = await channelsPage(hub, {
      ...filter,
      limit: Math.min(1000, limit - out.length),
      cursor,
    });
    out.push(...page.channels);
    cursor = page.next_cursor;
  } while (cursor !== null && out.length < limit);
  return out;
}

/** The partition and that partition's own cursor a bridge cursor names. */
function partitionCursor(cursor: string | null, partitions: number): { partition: number; cursor: string | null } {
  if (cursor === null) return { partition: 0, cursor: null };
  const match = /^(\d{1,3}):(.*)$/.exec(cursor);
  const partition = Number(match?.[1] ?? NaN);
  if (match === null || !(partition < partitions)) {
    throw new InvalidRequestError('cursor is not one this bridge gave: list again from the first page');
  }
  const inner = match[2] ?? '';
  return { partition, cursor: inner === '' ? null : inner };
}
