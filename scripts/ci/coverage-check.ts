/**
 * Reads the json summary `npm run test:coverage` writes (coverage/coverage-summary.json, or the path given as the
 * first argument) and prints the branch coverage of two areas whose untested branches hurt most: the client SDK
 * (retries, reconnects, turn leases) and the hub's lease and step-down paths. Exits 1 when either is below its
 * floor, or when a file of an area is missing from the summary (the coverage settings no longer include it).
 *
 * Run from the repository root: `node --import tsx scripts/ci/coverage-check.ts`.
 */
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { z } from 'zod';

/** One area: the files it spans (a folder ends in `/`) and the branch percentage it may not fall below. */
interface Area {
  readonly name: string;
  readonly paths: readonly string[];
  readonly floorPct: number;
}

// Each floor sits under what the whole suite reached when it was set (client 71.0 %, lease + hub 60.5 %; the unit
// tests plus the client and hub integration tests alone: 69.3 % and 60.5 %), so a change that drops the tests of
// these paths fails while run-to-run noise (a retry or a step-down taken or not on a loaded machine) does not. Hubs that process-level tests
// start as child processes are not measured: v8 coverage covers the test workers only.
const AREAS: readonly Area[] = [
  { name: 'client (packages/client/src)', paths: ['packages/client/src/'], floorPct: 66 },
  {
    name: 'lease and step-down (packages/hub/src/lease/lease.ts, hub.ts)',
    paths: ['packages/hub/src/lease/lease.ts', 'packages/hub/src/hub.ts'],
    floorPct: 55,
  },
];

const CountsSchema = z.object({ total: z.number().int().nonnegative(), covered: z.number().int().nonnegative() });
const FileSummarySchema = z.looseObject({ branches: CountsSchema });
const SummarySchema = z.record(z.string(), FileSummarySchema);

interface AreaResult {
  readonly area: Area;
  readonly files: number;
  readonly covered: number;
  readonly total: number;
  readonly pct: number;
  readonly missing: readonly string[];
}

/** Sums the branch counts of the files under `area`, keyed in the summary by absolute path. */
function measure(summary: z.infer<typeof SummarySchema>, area: Area, root: string): AreaResult {
  let covered = 0;
  let total = 0;
  let files = 0;
  const seen = new Set<string>();
  for (const [key, file] of Object.entries(summary)) {
    if (key === 'total') continue;
    const path = relative(root, key).split('\\').join('/');
    const match = area.paths.find((p) => (p.endsWith('/') ? path.startsWith(p) : path === p));
    if (match === undefined) continue;
    seen.add(match);
    files += 1;
    covered += file.branches.covered;
    total += file.branches.total;
  }
  // A file with no branches counts as fully covered, as istanbul reports it.
  const pct = total === 0 ? 100 : (covered / total) * 100;
  return { area, files, covered, total, pct, missing: area.paths.filter((p) => !seen.has(p)) };
}

function main(): number {
  const root = process.cwd();
  const summaryPath = resolve(root, process.argv[2] ?? 'coverage/coverage-summary.json');
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(summaryPath, 'utf8'));
  } catch (err) {
    process.stderr.write(`coverage-check: cannot read ${summaryPath}: ${String(err)}\n`);
    return 1;
  }
  const parsed = SummarySchema.safeParse(raw);
  if (!parsed.success) {
    process.stderr.write(`coverage-check: ${summaryPath} is not a json-summary report: ${parsed.error.message}\n`);
    return 1;
  }
  let ok = true;
  for (const result of AREAS.map((area) => measure(parsed.data, area, root))) {
    const below = result.pct < result.area.floorPct;
    const verdict = result.missing.length > 0 ? 'MISSING' : below ? 'BELOW FLOOR' : 'ok';
    process.stdout.write(
      `branch coverage, ${result.area.name}: ${result.pct.toFixed(1)} % ` +
        `(${result.covered}/${result.total} in ${result.files} files; floor ${result.area.floorPct} %) ${verdict}\n`,
    );
    if (result.missing.length > 0) {
      process.stderr.write(`coverage-check: not in the summary: ${result.missing.join(', ')}\n`);
    }
    if (below || result.missing.length > 0) ok = false;
  }
  return ok ? 0 : 1;
}

process.exitCode = main();
