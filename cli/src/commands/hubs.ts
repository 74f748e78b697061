import { DEFAULT_ROSTER_WINDOW_MS, partitionHolders } from '@ag2net/client';
import { partitionRuns, type DeliveryLag, type Health } from '@ag2net/protocol';
import type { Command } from 'commander';
import { z } from 'zod';
import { IntFlag, action } from '../env.js';
import type { CliIo } from '../io.js';
import type { Column, Output } from '../output.js';
import { formatSeconds } from './health.js';

const HubsOptions = z.object({ wait: IntFlag.default(DEFAULT_ROSTER_WINDOW_MS) });

/**
 * `ag2net hubs` (operators): every hub of the prefix, active and standbys (id, role, epoch, uptime, channels), the
 * deployment's partition count and, with several partitions, which hub holds each partition at which epoch; then the
 * delivery lag. `--json` prints `{ partitions, hubs, holders, unheld, delivery }`, the shape of the bridge's
 * `/v1/hub/status`.
 */
export function hubsCommand(program: Command, io: CliIo): void {
  program
    .command('hubs')
    .description(
      'every hub, active and standbys, the partitions each holds, and the delivery lag (operators: --operator)',
    )
    .option('--wait <ms>', `how long to collect the hubs' answers (default ${DEFAULT_ROSTER_WINDOW_MS})`)
    .action(
      action(io, HubsOptions, async (env, opts) => {
        const session = await env.session();
        session.requireOperator('hubs');
        const [hubs, delivery] = await Promise.all([
          session.hub.hubs({ timeout: opts.wait }),
          session.hub.deliveryLag(),
        ]);
        if (env.out.json) {
          const partitions = hubs[0]?.partitions ?? null;
          const holders = partitions === null ? [] : partitionHolders(hubs, partitions);
          const unheld = holders.filter((p) => p.held_by.length === 0).map((p) => p.partition);
          return env.out.data({ partitions, hubs, holders, unheld, delivery });
        }
        printHubStatus(env.out, hubs, delivery);
      }),
    );
}

/**
 * The human rendering of `ag2net hubs`: the hubs; with several partitions, each partition's holder and epoch (a
 * partition no hub holds shows `-`, one that two hubs report while it moves shows both); then the partition count and
 * the delivery lag.
 */
export function printHubStatus(o: Output, hubs: readonly Health[], delivery: DeliveryLag | null): void {
  // Every hub of a prefix runs with the prefix's count; none answered: unknown.
  const partitions = hubs[0]?.partitions ?? null;
  const partitioned = partitions !== null && partitions > 1;
  printHubs(o, hubs, partitioned);
  o.line('');
  if (partitioned) {
    printPartitions(o, hubs, partitions);
    o.line('');
  }
  printDelivery(o, delivery, partitions);
}

function printHubs(o: Output, hubs: readonly Health[], partitioned: boolean): void {
  const columns: Column<Health>[] = [
    { header: 'hub', cell: (h) => h.hub_id },
    { header: 'role', cell: (h) => h.role, tone: (h) => (h.role === 'active' ? 'ok' : 'dim') },
    { header: 'epoch', cell: (h) => String(h.epoch) },
    { header: 'uptime', cell: (h) => formatSeconds(h.uptime_seconds) },
    { header: 'channels', cell: (h) => String(h.active_channels) },
  ];
  if (partitioned) {
    columns.splice(2, 1, { header: 'partitions', cell: (h) => partitionRanges(h.held.map((p) => p.partition)) });
  }
  o.table(hubs, columns, 'no hub answered');
}

/** One row per partition and holder. */
interface PartitionRow {
  readonly partition: number;
  readonly hub: string | null;
  readonly epoch: number | null;
}

function printPartitions(o: Output, hubs: readonly Health[], partitions: number): void {
  const rows: PartitionRow[] = [];
  for (let k = 0; k < partitions; k++) {
    const holders = hubs.flatMap((h) => h.held.filter((p) => p.partition === k).map((p) => ({ hub: h.hub_id, ...p })));
    if (holders.length === 0) rows.push({ partition: k, hub: null, epoch: null });
    for (const { hub, epoch } of holders) rows.push({ partition: k, hub, epoch });
  }
  o.table(
    rows,
    [
      { header: 'partition', cell: (r) => String(r.partition) },
      { header: 'hub', cell: (r) => r.hub ?? '-', tone: (r) => (r.hub === null ? 'bad' : null) },
      { header: 'epoch', cell: (r) => (r.epoch === null ? '-' : String(r.epoch)) },
    ],
    'no partition',
  );
}

function printDelivery(o: Output, delivery: DeliveryLag | null, partitions: number | null): void {
  const count: readonly [string, string] = ['partitions', partitions === null ? '-' : String(partitions)];
  if (delivery === null) {
    o.fields([count]);
    o.line(o.paint('dim', 'no delivery consumer: no hub has started on this prefix'));
    return;
  }
  const age = delivery.oldest_pending_age_seconds;
  o.fields([
    count,
    ['pending', o.paint(delivery.pending > 0 ? 'warn' : 'ok', String(delivery.pending))],
    ['ack pending', String(delivery.ack_pending)],
    ['oldest pending', age === null ? '-' : o.paint('warn', formatSeconds(age))],
  ]);
}

/** Partitions as runs, `0-3, 6`; `-` for none. */
export function partitionRanges(partitions: readonly number[]): string {
  return partitionRuns(partitions).join(', ') || '-';
}
