import type { HubEnv } from '../partition/hub-parts.js';
import type { PartitionPick } from '../partition/partition.js';
import type { ChannelCount, HubView } from '../observe/observer.js';

/** The channels the partitions hold, counted by manifest type and state, sorted by type then state. */
export function channelCounts(partitions: readonly PartitionPick<'channels'>[]): ChannelCount[] {
  const counts = new Map<string, ChannelCount>();
  for (const rt of partitions.flatMap((ctx) => ctx.partition.channels.all())) {
    const { type } = rt.metadata.manifest;
    const { state } = rt.metadata;
    const key = `${type}\u0000${state}`;
    counts.set(key, { type, state, count: (counts.get(key)?.count ?? 0) + 1 });
  }
  return [...counts.values()].sort((a, b) => a.type.localeCompare(b.type) || a.state.localeCompare(b.state));
}

/**
 * Hands the observer its view of the hub, once, at start: the channels of every partition it holds (a partition it
 * does not hold has no channels in memory).
 */
export function bindObserver(
  ctx: Pick<HubEnv, 'observer' | 'logger'>,
  partitions: readonly PartitionPick<'channels'>[],
): void {
  const { bind } = ctx.observer;
  if (bind === undefined) return;
  const view: HubView = { channelCounts: () => channelCounts(partitions) };
  try {
    bind(view);
  } catch (err) {
    ctx.logger.warn({ err }, 'hub observer failed');
  }
}
