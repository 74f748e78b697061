import type { HubOp } from './ops.js';
import { MAX_PARTITIONS } from './partition-count.js';

export { MAX_PARTITIONS };

/**
 * How a deployment spreads its channels over partitions, each owned by one hub instance at a time. A client computes a
 * channel's partition itself (`partitionOf`) and sends the channel's operations to that partition's subject
 * (`HubNames.rpcIn`), which only the partition's owner subscribes to. The deployment's partition count is in every
 * hub's `Health.partitions`.
 */

/** FNV-1a, 32 bits: offset basis and prime. */
const FNV_OFFSET_BASIS = 2166136261;
const FNV_PRIME = 16777619;

/** FNV-1a (32 bits) of `text` encoded as UTF-8, as an unsigned integer. */
export function fnv1a32(text: string): number {
  let hash = FNV_OFFSET_BASIS;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, FNV_PRIME) >>> 0;
  }
  return hash >>> 0;
}

/** The partition of channel `channelId` in a deployment of `partitions` partitions: `fnv1a32(utf8(id)) mod partitions`. */
export function partitionOf(channelId: string, partitions: number): number {
  if (!Number.isInteger(partitions) || partitions < 1 || partitions > MAX_PARTITIONS) {
    throw new RangeError(`partitions must be an integer from 1 to ${MAX_PARTITIONS}, not ${partitions}`);
  }
  return partitions === 1 ? 0 : fnv1a32(channelId) % partitions;
}

/**
 * The operations about one channel (their request names it in `channel_id`): sent to the channel's partition. A
 * `createChannel` sent to a partitioned deployment must carry the `channel_id` the client minted.
 */
export const PARTITIONED_OPS: ReadonlySet<HubOp> = new Set<HubOp>([
  'createChannel',
  'getChannel',
  'closeChannel',
  'post',
  'readWal',
  'findEnvelopeByCausation',
  'canSend',
  'adapterState',
  'reportTurnFailure',
  'acquireTurnLock',
  'renewTurnLock',
  'releaseTurnLock',
]);

/**
 * The operations each partition answers for its own channels: a client of a partitioned deployment asks every
 * partition and joins the answers (`listChannels` page by page, partition after partition).
 */
export const SCATTERED_OPS: ReadonlySet<HubOp> = new Set<HubOp>(['listChannels', 'pendingTurnsFor', 'deliveryLag']);

/** Where an operation is served: one channel's partition, every partition, or the home partition (partition 0). */
export function routeOf(op: HubOp): 'channel' | 'scattered' | 'home' {
  if (PARTITIONED_OPS.has(op)) return 'channel';
  if (SCATTERED_OPS.has(op)) return 'scattered';
  return 'home';
}

/**
 * Partition numbers as runs of consecutive ones, each `k` or `first-last`, ascending and without repeats: `[6, 0, 1,
 * 2, 3]` is `['0-3', '6']`. How the CLI, the console and hub-service name a hub's share; `[]` for none.
 */
export function partitionRuns(partitions: readonly number[]): string[] {
  const sorted = [...new Set(partitions)].sort((a, b) => a - b);
  const runs: string[] = [];
  for (let i = 0; i < sorted.length; i += 1) {
    const first = sorted[i] ?? 0;
    let last = first;
    while (sorted[i + 1] === last + 1) last = sorted[++i] ?? last;
    runs.push(first === last ? String(first) : `${first}-${last}`);
  }
  return runs;
}
