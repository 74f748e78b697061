import type { HubEnv } from '../partition/hub-parts.js';
import type { PartitionPick } from '../partition/partition.js';
import { TurnLockTable } from '../stores/turn-lock-table.js';

/** What the hub's turn locks are built from: the bucket, clock, log and counters, and the lease that fences them. */
export type TurnLockDeps = Pick<HubEnv, 'resources' | 'clock' | 'logger' | 'counters'> & PartitionPick<'lease'>;

/** The turn locks of the hub of `ctx`: its bucket and clock, written only while it holds the writer lease. */
export function turnLockTable(ctx: TurnLockDeps): TurnLockTable {
  return new TurnLockTable({
    kv: ctx.resources.turnLocks,
    clock: ctx.clock,
    mayWrite: () => ctx.partition.lease.holds(),
    logger: ctx.logger,
    onQuarantined: () => {
      ctx.counters.quarantined += 1;
    },
  });
}
