import { readFile } from 'node:fs/promises';
import type { HostProcess } from './host/client.js';

/** Linux's clock tick, the unit of utime/stime in /proc/<pid>/stat (100 on every mainstream kernel). */
const CLK_TCK = 100;

/** CPU seconds used so far by each process the bench knows: itself, its host processes, the nats-server it started. */
export type CpuSnapshot = ReadonlyMap<string, number>;

/**
 * Reads how much CPU each process of a run has used, so that a throughput figure can be split into CPU per
 * envelope per process (where the two cores go). The nats-server is only measured when the bench started it.
 */
export class CpuMeter {
  constructor(
    private readonly natsPid: number | undefined,
    private readonly hosts: ReadonlyMap<string, HostProcess>,
  ) {}

  async snapshot(): Promise<CpuSnapshot> {
    const out = new Map<string, number>();
    const self = process.cpuUsage();
    out.set('driver', (self.user + self.system) / 1e6);
    await Promise.all(
      [...this.hosts].map(async ([name, host]) => {
        const { user_us: user, system_us: system } = await host.call('cpu', {});
        out.set(name, (user + system) / 1e6);
      }),
    );
    const nats = this.natsPid === undefined ? null : await procCpuSeconds(this.natsPid);
    if (nats !== null) out.set('nats-server', nats);
    return out;
  }
}

/** Snapshots at the start and end of one measurement window. */
export interface CpuWindow {
  readonly before: CpuSnapshot;
  readonly after: CpuSnapshot;
}

/** Per process, over some windows: cores' worth used (1 = one core busy) and CPU µs per operation. */
export function cpuOver(
  windows: readonly CpuWindow[],
  seconds: number,
  operations: number,
): Record<string, { readonly core_share: number; readonly us_per_op: number }> {
  const used = new Map<string, number>();
  for (const { before, after } of windows) {
    for (const [name, end] of after) {
      const start = before.get(name);
      if (start !== undefined) used.set(name, (used.get(name) ?? 0) + end - start);
    }
  }
  const out: Record<string, { core_share: number; us_per_op: number }> = {};
  for (const [name, s] of used) {
    out[name] = {
      core_share: Math.round((s / seconds) * 100) / 100,
      us_per_op: operations === 0 ? 0 : Math.round((s * 1e6) / operations),
    };
  }
  return out;
}

async function procCpuSeconds(pid: number): Promise<number | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at the last ')'; utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return null;
  }
}
