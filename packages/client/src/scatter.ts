import type { DeliveryLag, PendingTurn } from '@ag2net/protocol';

/** The partitions of a deployment of `partitions`: 0, 1, …, `partitions` - 1. */
export function partitionRange(partitions: number): number[] {
  return Array.from({ length: partitions }, (_, k) => k);
}

/**
 * Every partition's pending turns (each partition answers for its own channels) as one list, by `expected_at`, then
 * channel id.
 */
export function mergePendingTurns(lists: readonly (readonly PendingTurn[])[]): PendingTurn[] {
  return lists.flat().sort((a, b) => {
    const byTime = Date.parse(a.expected_at) - Date.parse(b.expected_at);
    if (byTime !== 0) return byTime;
    return a.channel_id < b.channel_id ? -1 : a.channel_id > b.channel_id ? 1 : 0;
  });
}

/**
 * The delivery lag of a deployment from its partitions' (each partition delivers its own channels): `pending` and
 * `ack_pending` summed, `oldest_pending_age_seconds` the largest of those that have one (`null` when none has);
 * `null` when every partition's delivery is `null` (never provisioned).
 */
export function combineDeliveryLags(lags: readonly (DeliveryLag | null)[]): DeliveryLag | null {
  const known = lags.filter((lag): lag is DeliveryLag => lag !== null);
  if (known.length === 0) return null;
  const ages = known.flatMap((lag) =>
    lag.oldest_pending_age_seconds === null ? [] : [lag.oldest_pending_age_seconds],
  );
  return {
    pending: known.reduce((sum, lag) => sum + lag.pending, 0),
    ack_pending: known.reduce((sum, lag) => sum + lag.ack_pending, 0),
    oldest_pending_age_seconds: ages.length === 0 ? null : Math.max(...ages),
  };
}
