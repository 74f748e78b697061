/**
 * The API reports of the published packages: one per entry point of each package's exports map ("." and
 * "./internal"), read from the built declarations and kept in packages/<pkg>/api/. `check` fails when a report differs
 * from what the code exports, and prints the difference; `update` rewrites the reports. Both fail on an API Extractor
 * warning or error (scripts/api/api-extractor.base.json says which messages count), and when a package's guide (GUIDES)
 * lists in its "Public API" section other names than the package exports.
 *
 * Usage: node --import tsx scripts/api/reports.ts check|update [package-folder …]
 * (npm run api:check / npm run api:update build the declarations first, with `--force`: an incremental build keeps the
 * declarations of files that did not change, and TypeScript writes the members of an inferred union in the order it
 * first met their types, so a kept declaration can list them in another order than a clean build does.)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import {
  Extractor,
  ExtractorConfig,
  ExtractorLogLevel,
  type ExtractorMessage,
  type IConfigFile,
} from '@microsoft/api-extractor';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../..');
const BASE_CONFIG = join(ROOT, 'scripts/api/api-extractor.base.json');

type Mode = 'check' | 'update';

const REPORT_STATE_MESSAGES: ReadonlySet<string> = new Set([
  'console-api-report-not-copied',
  'console-api-report-copied',
  'console-api-report-created',
]);

/** One entry point of a published package and the report that records it. */
interface Entry {
  /** The package's folder, absolute. */
  readonly dir: string;
  /** The package's name, e.g. `@ag2net/protocol`. */
  readonly packageName: string;
  /** The exports-map key: `.` or `./internal`. */
  readonly subpath: string;
  /** The built declaration file the entry point's `types` condition names, absolute. */
  readonly declarations: string;
  /** The report's file name without `.api.md`: `protocol`, `protocol-internal`. */
  readonly reportName: string;
}

interface PackageJson {
  readonly name: string;
  readonly private?: boolean;
  readonly exports?: Record<string, string | Record<string, string>>;
}

/** Every entry point of every published workspace under packages/ (not private, with an exports map). */
function publishedEntries(only: readonly string[]): Entry[] {
  const entries: Entry[] = [];
  for (const folder of readdirSync(join(ROOT, 'packages')).sort()) {
    const dir = join(ROOT, 'packages', folder);
    const manifest = join(dir, 'package.json');
    if (!existsSync(manifest)) continue;
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as PackageJson;
    if (pkg.private === true || pkg.exports === undefined) continue;
    if (only.length > 0 && !only.includes(folder) && !only.includes(`packages/${folder}`)) continue;
    const unscoped = pkg.name.replace(/^@[^/]+\//, '');
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      if (subpath === './package.json') continue;
      const types = typeof target === 'string' ? undefined : target['types'];
      if (types === undefined) throw new Error(`${pkg.name}: exports["${subpath}"] names no types`);
      const suffix = subpath === '.' ? '' : `-${subpath.replace(/^\.\//, '').replaceAll('/', '-')}`;
      entries.push({
        dir,
        packageName: pkg.name,
        subpath,
        declarations: join(dir, types),
        reportName: `${unscoped}${suffix}`,
      });
    }
  }
  return entries;
}

const namesOf = new Map<string, string[]>();

/** The names an entry point exports, read from its built declarations (once per file). */
function exportedNames(declarations: string): string[] {
  const known = namesOf.get(declarations);
  if (known !== undefined) return known;
  const names = readExportedNames(declarations);
  namesOf.set(declarations, names);
  return names;
}

function readExportedNames(declarations: string): string[] {
  const program = ts.createProgram([declarations], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noEmit: true,
    skipLibCheck: true,
  });
  const source = program.getSourceFile(declarations);
  const checker = program.getTypeChecker();
  const module = source === undefined ? undefined : checker.getSymbolAtLocation(source);
  if (module === undefined) return [];
  return checker.getExportsOfModule(module).map((symbol) => symbol.name);
}

const FORGOTTEN_EXPORT = /^The symbol "([^"]+)" needs to be exported/;

/** Packages whose guide lists their public surface in a `## Public API` section, checked against the main entry. */
const GUIDES: Readonly<Record<string, string>> = {
  '@ag2net/client': 'docs/client.md',
  '@ag2net/agent': 'docs/agent.md',
};

/**
 * Where a guide's `## Public API` section and the package disagree: a name the main entry exports that the section
 * does not list, or a name the section lists (in backticks) that no entry point of the package exports.
 */
function guideProblems(packageName: string, exported: readonly string[], internal: readonly string[]): string[] {
  const guide = GUIDES[packageName];
  if (guide === undefined) return [];
  const text = readFileSync(join(ROOT, guide), 'utf8');
  const start = text.indexOf('\n## Public API\n');
  if (start < 0) return [`${guide} has no "## Public API" section`];
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end < 0 ? undefined : end);
  const listed = new Set([...section.matchAll(/`([A-Za-z_$][\w$]*)`/g)].map((match) => match[1] ?? ''));
  const known = new Set([...exported, ...internal]);
  const missing = exported.filter((name) => !listed.has(name));
  const extra = [...listed].filter((name) => !known.has(name));
  const problems: string[] = [];
  if (missing.length > 0) problems.push(`${guide} ("Public API") does not list ${missing.join(', ')}`);
  if (extra.length > 0)
    problems.push(`${guide} ("Public API") lists ${extra.join(', ')}, which the package does not export`);
  return problems;
}

/** What one run of API Extractor found about one entry point. */
interface Outcome {
  readonly reportChanged: boolean;
  readonly problems: readonly string[];
}

/**
 * Runs API Extractor on one entry point. `elsewhere` are the names the package's main entry point exports: an
 * `./internal` signature may name them without exporting them again (its report names them; the main report has them).
 */
function extract(entry: Entry, mode: Mode, options: { tempFolder: string; elsewhere: ReadonlySet<string> }): Outcome {
  const base = ExtractorConfig.loadFile(BASE_CONFIG);
  const configObject: IConfigFile = {
    ...base,
    projectFolder: entry.dir,
    mainEntryPointFilePath: entry.declarations,
    apiReport: {
      ...base.apiReport,
      enabled: true,
      reportFolder: join(entry.dir, 'api'),
      reportFileName: entry.reportName,
      reportTempFolder: options.tempFolder,
    },
  };
  const config = ExtractorConfig.prepare({
    configObject,
    configObjectFullPath: BASE_CONFIG,
    packageJsonFullPath: join(entry.dir, 'package.json'),
  });
  if (mode === 'update') mkdirSync(join(entry.dir, 'api'), { recursive: true });
  const problems: string[] = [];
  const result = Extractor.invoke(config, {
    localBuild: mode === 'update',
    messageCallback: (message: ExtractorMessage) => {
      message.handled = true;
      if (message.logLevel !== ExtractorLogLevel.Error && message.logLevel !== ExtractorLogLevel.Warning) return;
      // A report created, rewritten or differing is what this script reports itself (with the difference).
      if (REPORT_STATE_MESSAGES.has(message.messageId)) return;
      const forgotten = message.messageId === 'ae-forgotten-export' ? FORGOTTEN_EXPORT.exec(message.text) : null;
      if (forgotten?.[1] !== undefined && options.elsewhere.has(forgotten[1])) return;
      const where =
        message.sourceFilePath === undefined
          ? ''
          : `${relative(ROOT, message.sourceFilePath)}:${message.sourceFileLine ?? 0}: `;
      problems.push(`${where}${message.text} (${message.messageId})`);
    },
  });
  return { reportChanged: result.apiReportChanged, problems };
}

function main(argv: readonly string[]): number {
  const [mode, ...only] = argv;
  if (mode !== 'check' && mode !== 'update') {
    process.stderr.write('usage: reports.ts check|update [package-folder …]\n');
    return 2;
  }
  const entries = publishedEntries(only);
  if (entries.length === 0) {
    process.stderr.write(`no published package matches ${only.join(', ')}\n`);
    return 2;
  }
  const tempFolder = mkdtempSync(join(tmpdir(), 'ag2net-api-'));
  let failed = false;
  try {
    for (const entry of entries) {
      const label = `${entry.packageName}${entry.subpath === '.' ? '' : entry.subpath.slice(1)}`;
      const report = join(entry.dir, 'api', `${entry.reportName}.api.md`);
      if (!existsSync(entry.declarations)) {
        process.stderr.write(
          `${label}: ${relative(ROOT, entry.declarations)} is missing: build first (npm run build)\n`,
        );
        failed = true;
        continue;
      }
      const mainEntry = entries.find((e) => e.dir === entry.dir && e.subpath === '.');
      const elsewhere = new Set(
        mainEntry === undefined || mainEntry === entry ? [] : exportedNames(mainEntry.declarations),
      );
      const exported = exportedNames(entry.declarations);
      const names = exported.length;
      const { reportChanged, problems: extractorProblems } = extract(entry, mode, { tempFolder, elsewhere });
      const internal = entries
        .filter((e) => e.dir === entry.dir && e.subpath !== '.')
        .flatMap((e) => exportedNames(e.declarations));
      const problems =
        entry.subpath === '.'
          ? [...extractorProblems, ...guideProblems(entry.packageName, exported, internal)]
          : extractorProblems;
      for (const problem of problems) process.stderr.write(`${label}: ${problem}\n`);
      if (problems.length > 0) failed = true;
      if (reportChanged && mode === 'check') {
        failed = true;
        process.stderr.write(
          `${label}: ${relative(ROOT, report)} differs from what the code exports` +
            ' (run `npm run api:update` and commit the report if the change is intended):\n',
        );
        const candidate = join(tempFolder, `${entry.reportName}.api.md`);
        spawnSync('diff', ['-u', '-N', '--label', relative(ROOT, report), '--label', 'built', report, candidate], {
          stdio: ['ignore', 'inherit', 'inherit'],
        });
      } else {
        const state = reportChanged ? 'updated' : 'unchanged';
        const outcome = problems.length > 0 ? 'FAILED' : state;
        process.stdout.write(`${label}: ${names} names, ${relative(ROOT, report)} ${outcome}\n`);
      }
    }
  } finally {
    rmSync(tempFolder, { recursive: true, force: true });
  }
  return failed ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
