import type { HubContext } from '../core/context.js';
import { TurnLockTable } from './turn-lock-table.js';

/** The turn locks of the hub of `ctx`: its bucket and clock, written only while it holds the writer lease. */
export function turnLockTable(ctx: HubContext): TurnLockTable {
  return new TurnLockTable({
    kv: ctx.resources.turnLocks,
    clock: ctx.clock,
    mayWrite: () => ctx.lease.holds(),
    logger: ctx.logger,
    onQuarantined: () => {
      ctx.counters.quarantined += 1;
    },
  });
}
