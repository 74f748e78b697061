/**
 * Summarizes V8 CPU profiles (`.cpuprofile`, as written by `npm run bench -- --profile`): where the process spent
 * its time, by area (hub file, zod, nats.js, Node, GC, idle) and by function, self and inclusive.
 *
 *   npm run profile-summary -w @ag2net/bench -- <file.cpuprofile> [--top 40] [--timeline] [--from S --to S]
 *
 * `--timeline` prints how busy the process was each second; `--from`/`--to` (seconds from the profile's start)
 * restrict the summary to one run of a scenario.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { z } from 'zod';

const ProfileSchema = z.looseObject({
  nodes: z.array(
    z.looseObject({
      id: z.number(),
      callFrame: z.looseObject({ functionName: z.string(), url: z.string(), lineNumber: z.number() }),
      children: z.array(z.number()).optional(),
    }),
  ),
  samples: z.array(z.number()),
  timeDeltas: z.array(z.number()),
});
type Profile = z.infer<typeof ProfileSchema>;
type ProfileNode = Profile['nodes'][number];

/** Where a file belongs, for the per-area totals. */
function area(node: ProfileNode): string {
  const { url, functionName } = node.callFrame;
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  const hub = /\/packages\/(\w[\w-]*)\/src\/(.+)$/.exec(url);
  if (hub !== null) return `@ag2net/${hub[1]}: ${hub[2]}`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.+)$/.exec(url);
  if (pkg !== null)
    return pkg[1] === '@nats-io/nats-core' || pkg[1] === '@nats-io/jetstream'
      ? `${pkg[1]}: ${(pkg[2] ?? '').replace(/^lib\//, '')}`
      : (pkg[1] ?? url);
  if (url.startsWith('node:')) return 'node internals';
  return url;
}

function label(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file =
    url === ''
      ? ''
      : ` ${url.replace(/^.*\/(packages|node_modules)\//, '$1/').replace(/^file:\/\//, '')}:${lineNumber + 1}`;
  return `${functionName || '(anonymous)'}${file}`;
}

interface Totals {
  readonly totalUs: number;
  readonly selfByArea: Map<string, number>;
  readonly selfByFunction: Map<string, number>;
  readonly inclusiveByFunction: Map<string, number>;
}

/** Seconds from the profile's start of each sample. */
function sampleTimes(profile: Profile): number[] {
  let t = 0;
  return profile.timeDeltas.map((d) => (t += d) / 1e6);
}

/** Busy share per second of the profile: where the runs of a scenario were (to pick `--from`/`--to`). */
function timeline(profile: Profile): string {
  const idleIds = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
  const times = sampleTimes(profile);
  const busy = new Map<string, number>();
  const all = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const second = Math.floor(times[i] ?? 0);
    const d = profile.timeDeltas[i] ?? 0;
    add(all, String(second), d);
    if (!idleIds.has(id)) add(busy, String(second), d);
  });
  return [...all.entries()]
    .map(([second, us]) => `${second.padStart(4)} s ${'#'.repeat(Math.round((20 * (busy.get(second) ?? 0)) / us))}`)
    .join('\n');
}

function summarizeProfile(profile: Profile, from: number, to: number): Totals {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  const times = sampleTimes(profile);
  profile.samples.forEach((id, i) => {
    const t = times[i] ?? 0;
    if (t >= from && t <= to) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const selfByArea = new Map<string, number>();
  const selfByFunction = new Map<string, number>();
  for (const [id, us] of self) {
    const node = byId.get(id);
    if (node === undefined) continue;
    add(selfByArea, area(node), us);
    add(selfByFunction, label(node), us);
  }
  const inclusiveByFunction = new Map<string, number>();
  const childIds = new Set(profile.nodes.flatMap((n) => n.children ?? []));
  const roots = profile.nodes.filter((n) => !childIds.has(n.id));
  // Inclusive time: a node's own time plus its subtree's, counted once per function even when it recurses.
  const visit = (node: ProfileNode, onStack: Set<string>): number => {
    let total = self.get(node.id) ?? 0;
    const key = label(node);
    const fresh = !onStack.has(key);
    if (fresh) onStack.add(key);
    for (const child of node.children ?? []) {
      const c = byId.get(child);
      if (c !== undefined) total += visit(c, onStack);
    }
    if (fresh) {
      onStack.delete(key);
      add(inclusiveByFunction, key, total);
    }
    return total;
  };
  let totalUs = 0;
  for (const root of roots) totalUs += visit(root, new Set());
  return { totalUs, selfByArea, selfByFunction, inclusiveByFunction };
}

function add(map: Map<string, number>, key: string, us: number): void {
  map.set(key, (map.get(key) ?? 0) + us);
}

function top(map: Map<string, number>, totalUs: number, n: number, busyUs: number): string {
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, us]) => {
      const ms = (us / 1000).toFixed(0).padStart(7);
      const pct = ((100 * us) / totalUs).toFixed(1).padStart(5);
      const busy = ((100 * us) / busyUs).toFixed(1).padStart(5);
      return `${ms} ms ${pct}% all ${busy}% busy  ${k}`;
    })
    .join('\n');
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    args: process.argv.slice(2),
    options: {
      top: { type: 'string', default: '30' },
      from: { type: 'string', default: '0' },
      to: { type: 'string', default: 'Infinity' },
      timeline: { type: 'boolean', default: false },
    },
    allowPositionals: true,
  });
  const n = Number(values.top);
  for (const file of positionals) {
    const profile = ProfileSchema.parse(JSON.parse(await readFile(file, 'utf8')));
    if (values.timeline) process.stdout.write(`# ${file}: busy share per second\n${timeline(profile)}\n`);
    const t = summarizeProfile(profile, Number(values.from), Number(values.to));
    const idle = t.selfByArea.get('(idle)') ?? 0;
    const busy = t.totalUs - idle;
    const out = [
      `# ${file}`,
      `${(t.totalUs / 1e6).toFixed(2)} s sampled, ${(busy / 1e6).toFixed(2)} s busy (${((100 * busy) / t.totalUs).toFixed(0)}%)`,
      '',
      '## Self time by area',
      top(t.selfByArea, t.totalUs, n, busy),
      '',
      '## Self time by function',
      top(t.selfByFunction, t.totalUs, n, busy),
      '',
      '## Inclusive time by function',
      top(t.inclusiveByFunction, t.totalUs, n, busy),
      '',
    ];
    process.stdout.write(`${out.join('\n')}\n`);
  }
}

void main();
