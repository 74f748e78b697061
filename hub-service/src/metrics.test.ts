import type { Health } from '@ag2net/protocol';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { hubMetrics, type HubReadings } from './metrics.js';

/** A hub of `partitions` partitions holding `held`, as the gauges read it. */
function hubHolding(partitions: number, held: Health['held']): HubReadings {
  const health: Health = {
    hub_id: 'hub-a',
    role: held.length > 0 ? 'active' : 'standby',
    epoch: held[0]?.epoch ?? 0,
    active_channels: 0,
    registered_agents: 2,
    adapters_loaded: 4,
    uptime_seconds: 1,
    quarantined: 0,
    dead_letters: 0,
    partitions,
    held,
  };
  return { role: health.role, epoch: health.epoch, health: () => health };
}

/** The exposition lines of `name`: its help, its type and its samples, as a scrape shows them. */
async function linesOf(registry: Registry, name: string): Promise<string[]> {
  const ofName = [`# HELP ${name} `, `# TYPE ${name} `, `${name} `, `${name}{`];
  return (await registry.metrics()).split('\n').filter((line) => ofName.some((start) => line.startsWith(start)));
}

describe('hubMetrics partition gauges', () => {
  it('expose how many partitions the hub serves and how many the prefix has', async () => {
    const registry = new Registry();
    const held = [
      { partition: 1, epoch: 3 },
      { partition: 4, epoch: 1 },
      { partition: 6, epoch: 2 },
    ];
    hubMetrics(registry, () => hubHolding(8, held));
    expect(await linesOf(registry, 'ag2net_hub_partitions_held')).toEqual([
      '# HELP ag2net_hub_partitions_held Partitions this hub serves now (0 on a standby).',
      '# TYPE ag2net_hub_partitions_held gauge',
      'ag2net_hub_partitions_held 3',
    ]);
    expect(await linesOf(registry, 'ag2net_hub_partitions')).toEqual([
      "# HELP ag2net_hub_partitions Partitions the prefix's channels are spread over (0 until the hub started).",
      '# TYPE ag2net_hub_partitions gauge',
      'ag2net_hub_partitions 8',
    ]);
    expect(await linesOf(registry, 'ag2net_hub_active')).toContain('ag2net_hub_active 1');
    expect(await linesOf(registry, 'ag2net_hub_lease_epoch')).toContain('ag2net_hub_lease_epoch 3');
  });

  it('report a standby as serving none, and nothing before the hub started', async () => {
    const standby = new Registry();
    hubMetrics(standby, () => hubHolding(8, []));
    expect(await linesOf(standby, 'ag2net_hub_partitions_held')).toContain('ag2net_hub_partitions_held 0');
    expect(await linesOf(standby, 'ag2net_hub_partitions')).toContain('ag2net_hub_partitions 8');
    expect(await linesOf(standby, 'ag2net_hub_active')).toContain('ag2net_hub_active 0');

    const starting = new Registry();
    hubMetrics(starting, () => undefined);
    expect(await linesOf(starting, 'ag2net_hub_partitions_held')).toContain('ag2net_hub_partitions_held 0');
    expect(await linesOf(starting, 'ag2net_hub_partitions')).toContain('ag2net_hub_partitions 0');
  });
});
