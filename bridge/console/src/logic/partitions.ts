import { partitionRuns, type Health } from '@ag2net/protocol';
import type { HubHealth, PartitionHolders } from '../../../src/api-schemas.js';

/** Partitions as runs, `0-3, 6`; `none` for none. */
export function partitionRanges(partitions: readonly number[]): string {
  return partitionRuns(partitions).join(', ') || 'none';
}

/**
 * The partitions the answering hub of `/v1/hub/health` holds. A hub from before partitions lists none in `held`;
 * holding the only partition, it is named by `lease`.
 */
export function answeringHeld(reply: HubHealth): Health['held'] {
  if (reply.health.held.length > 0 || reply.lease === null) return reply.health.held;
  return [{ partition: 0, epoch: reply.lease.epoch }];
}

/** The partitions `hubId` holds, by the status's `holders`. */
export function partitionsOf(hubId: string, holders: readonly PartitionHolders[]): number[] {
  return holders.filter((p) => p.held_by.some((h) => h.hub_id === hubId)).map((p) => p.partition);
}

/** What the hub view says of partitions no hub holds; `null` when every partition has a holder. */
export function unheldWarning(unheld: readonly number[], partitions: number): string | null {
  if (unheld.length === 0) return null;
  if (unheld.length >= partitions) {
    return partitions === 1
      ? 'No hub holds the partition: no channel is served until a hub takes it over.'
      : `No hub holds any of the ${partitions} partitions: no channel is served until a hub takes them over.`;
  }
  if (unheld.length === 1) {
    return `No hub holds partition ${partitionRanges(unheld)}: its channels are not served until a hub takes it over.`;
  }
  return `No hub holds partitions ${partitionRanges(unheld)}: their channels are not served until a hub takes them over.`;
}

/** How the hub view sums up who serves a deployment of several partitions. */
export function servingSummary(partitions: number, holders: readonly PartitionHolders[]): string {
  const hubs = new Set(holders.flatMap((p) => p.held_by.map((h) => h.hub_id))).size;
  const held = holders.filter((p) => p.held_by.length > 0).length;
  const by = hubs === 1 ? '1 hub' : `${hubs} hubs`;
  if (held === 0) return `${partitions} partitions, none held.`;
  return held === partitions
    ? `All ${partitions} partitions held by ${by}.`
    : `${held} of ${partitions} partitions held by ${by}.`;
}
