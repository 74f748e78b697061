import type { Command } from 'commander';
import { NoOptions, action } from '../env.js';
import type { CliIo } from '../io.js';

/** `ag2net health`: the active hub's report (role, epoch, counts, quarantined records, dead letters). */
export function healthCommand(program: Command, io: CliIo): void {
  program
    .command('health')
    .description("the active hub's health: role, epoch, channels, agents, quarantined records, dead letters")
    .action(
      action(io, NoOptions, async (env) => {
        const session = await env.session();
        const health = await session.hub.health({ timeout: session.target.timeoutMs });
        if (env.out.json) return env.out.data(health);
        const o = env.out;
        o.fields([
          ['hub', health.hub_id],
          ['role', o.paint(health.role === 'active' ? 'ok' : 'warn', health.role)],
          ['epoch', String(health.epoch)],
          ['channels', `${health.active_channels} active`],
          ['agents', `${health.registered_agents} registered`],
          ['adapters', String(health.adapters_loaded)],
          ['uptime', formatSeconds(health.uptime_seconds)],
          ['quarantined', o.paint(health.quarantined > 0 ? 'warn' : 'ok', String(health.quarantined))],
          ['dead letters', o.paint(health.dead_letters > 0 ? 'warn' : 'ok', String(health.dead_letters))],
        ]);
      }),
    );
}

/** `3d 4h`, `2h 5m`, `4m 10s`, `12s`. */
export function formatSeconds(total: number): string {
  const s = Math.floor(total);
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s % 60}s`;
  return `${s}s`;
}
