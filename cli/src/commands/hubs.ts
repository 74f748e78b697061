import { DEFAULT_ROSTER_WINDOW_MS } from '@ag2net/client';
import type { DeliveryLag, Health } from '@ag2net/protocol';
import type { Command } from 'commander';
import { z } from 'zod';
import { IntFlag, action } from '../env.js';
import type { CliIo } from '../io.js';
import type { Output } from '../output.js';
import { formatSeconds } from './health.js';

const HubsOptions = z.object({ wait: IntFlag.default(DEFAULT_ROSTER_WINDOW_MS) });

/**
 * `ag2net hubs` (operators): every hub of the prefix, active and standbys (id, role, epoch, uptime, channels), and
 * the delivery lag. `--json` prints `{ lease, hubs, delivery }`, the shape of the bridge's `/v1/hub/status`.
 */
export function hubsCommand(program: Command, io: CliIo): void {
  program
    .command('hubs')
    .description('every hub, active and standbys, and the delivery lag (operators: --operator)')
    .option('--wait <ms>', `how long to collect the hubs' answers (default ${DEFAULT_ROSTER_WINDOW_MS})`)
    .action(
      action(io, HubsOptions, async (env, opts) => {
        const session = await env.session();
        session.requireOperator('hubs');
        const [hubs, delivery] = await Promise.all([
          session.hub.hubs({ timeout: opts.wait }),
          session.hub.deliveryLag(),
        ]);
        const active = hubs.find((h) => h.role === 'active');
        const lease = active === undefined ? null : { holder: active.hub_id, epoch: active.epoch };
        if (env.out.json) return env.out.data({ lease, hubs, delivery });
        printHubs(env.out, hubs);
        env.out.line('');
        printDelivery(env.out, delivery);
      }),
    );
}

function printHubs(o: Output, hubs: readonly Health[]): void {
  o.table(
    hubs,
    [
      { header: 'hub', cell: (h) => h.hub_id },
      { header: 'role', cell: (h) => h.role, tone: (h) => (h.role === 'active' ? 'ok' : 'dim') },
      { header: 'epoch', cell: (h) => String(h.epoch) },
      { header: 'uptime', cell: (h) => formatSeconds(h.uptime_seconds) },
      { header: 'channels', cell: (h) => String(h.active_channels) },
    ],
    'no hub answered',
  );
}

function printDelivery(o: Output, delivery: DeliveryLag | null): void {
  if (delivery === null) {
    o.line(o.paint('dim', 'no delivery consumer: no hub has started on this prefix'));
    return;
  }
  const age = delivery.oldest_pending_age_seconds;
  o.fields([
    ['pending', o.paint(delivery.pending > 0 ? 'warn' : 'ok', String(delivery.pending))],
    ['ack pending', String(delivery.ack_pending)],
    ['oldest pending', age === null ? '-' : o.paint('warn', formatSeconds(age))],
  ]);
}
