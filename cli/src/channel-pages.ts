import type { HubClient } from '@ag2net/client';
import type { ChannelMetadata, HubRequest, HubResponse } from '@ag2net/protocol';

/** The hub's largest page of a list operation. */
const PAGE = 1000;

/**
 * The channels `filter` selects, page by page and, in a deployment of several partitions, partition after partition
 * from 0 on (each lists its own channels), until `enough` says so or every page was read. Each page is passed through
 * `keep` first (default: every channel).
 */
export async function listChannelPages(
  hub: Pick<HubClient, 'call' | 'partitions'>,
  filter: Pick<HubRequest<'listChannels'>, 'agent_id' | 'state'>,
  options: {
    readonly caller: string;
    readonly keep?: (channel: ChannelMetadata) => boolean;
    readonly enough?: (found: readonly ChannelMetadata[]) => boolean;
  },
): Promise<ChannelMetadata[]> {
  const { caller, keep = () => true, enough = () => false } = options;
  const partitions = await hub.partitions();
  const found: ChannelMetadata[] = [];
  for (let partition = 0; partition < partitions && !enough(found); partition++) {
    let cursor: string | null = null;
    do {
      const page: HubResponse<'listChannels'> = await hub.call(
        'listChannels',
        { ...filter, limit: PAGE, cursor },
        { caller, partition },
      );
      found.push(...page.channels.filter(keep));
      cursor = page.next_cursor;
    } while (cursor !== null && !enough(found));
  }
  return found;
}
