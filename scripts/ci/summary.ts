/**
 * Prints the closing lines of a CI run: every test that passed only on its retry and every failed test (file, name
 * and the first lines of its error), then one "N passed, N failed, N skipped" line summing the vitest runs' JSON
 * reports and the Python counts. The lists come last but one so that a log cut to its tail still names them.
 *
 * Run from the repository root:
 * `node --import tsx scripts/ci/summary.ts --python "<passed> <failed> <skipped>" [--python-failed <file>] <report.json>...`
 * (an empty report path is skipped: the floor's run does not happen when the current server was not fetched).
 */
import { existsSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';

const Assertion = z.object({
  fullName: z.string(),
  status: z.string(),
  failureMessages: z.array(z.string()).default([]),
});
const FileResult = z.object({
  name: z.string(),
  status: z.string(),
  message: z.string().default(''),
  assertionResults: z.array(Assertion).default([]),
});
const Report = z.object({
  numPassedTests: z.number().int().nonnegative(),
  numFailedTests: z.number().int().nonnegative(),
  numPendingTests: z.number().int().nonnegative().default(0),
  numTodoTests: z.number().int().nonnegative().default(0),
  testResults: z.array(FileResult).default([]),
});
type Report = z.infer<typeof Report>;

/** At most this many lines of each error: enough for the assertion and where it failed. */
const ERROR_LINES = 6;

function firstLines(text: string): string {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(0, ERROR_LINES)
    .map((line) => `      ${line.slice(0, 300)}`)
    .join('\n');
}

/** Tests that passed only on a retry: they count as passed, and are listed so that nobody mistakes them for stable. */
function retriedOf(report: Report, label: string): string[] {
  const out: string[] = [];
  for (const file of report.testResults) {
    const path = relative(process.cwd(), file.name);
    for (const a of file.assertionResults) {
      if (a.status !== 'passed' || a.failureMessages.length === 0) continue;
      out.push(`  ~ [${label}] ${path} > ${a.fullName}\n${firstLines(a.failureMessages.join('\n'))}`);
    }
  }
  return out;
}

function failuresOf(report: Report, label: string): string[] {
  const out: string[] = [];
  for (const file of report.testResults) {
    const path = relative(process.cwd(), file.name);
    const failed = file.assertionResults.filter((a) => a.status === 'failed');
    for (const a of failed) {
      out.push(`  ✗ [${label}] ${path} > ${a.fullName}\n${firstLines(a.failureMessages.join('\n'))}`);
    }
    // A file that failed with no failed test in it: a hook or the import threw.
    if (file.status === 'failed' && failed.length === 0) {
      out.push(`  ✗ [${label}] ${path} (the file itself)\n${firstLines(file.message)}`);
    }
  }
  return out;
}

/** The closing lines for `argv` (the script's arguments), as printed. */
export function summarize(argv: readonly string[]): string {
  let python = '0 0 0';
  let pythonFailed = '';
  const reports: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] ?? '';
    if (arg === '--python') {
      python = argv[i + 1] ?? python;
      i += 1;
    } else if (arg === '--python-failed') {
      pythonFailed = argv[i + 1] ?? '';
      i += 1;
    } else if (arg !== '') {
      reports.push(arg);
    }
  }
  const runs: { label: string; report: Report }[] = [];
  const broken: string[] = [];
  for (const [index, path] of reports.entries()) {
    const label = index === 0 ? 'suite' : 'floor';
    if (!existsSync(path)) {
      broken.push(`  ✗ [${label}] no report at ${path}: the run ended before writing it`);
      continue;
    }
    const parsed = Report.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    if (!parsed.success) {
      broken.push(`  ✗ [${label}] the report at ${path} is not a vitest JSON report`);
      continue;
    }
    runs.push({ label, report: parsed.data });
  }
  const [pyPassed = 0, pyFailed = 0, pySkipped = 0] = python.split(' ').map(Number);
  const testFailures = runs.flatMap((r) => failuresOf(r.report, r.label));
  // A file that failed outside its tests (a hook, the import) counts once, so the closing line never says 0 failed.
  const fileFailures = testFailures.filter((line) => line.includes('(the file itself)')).length;
  const failures = [...broken, ...testFailures];
  if (pythonFailed !== '' && existsSync(pythonFailed)) {
    for (const line of readFileSync(pythonFailed, 'utf8').split('\n')) {
      if (line.trim() !== '') failures.push(`  ✗ [python] ${line.trim()}`);
    }
  }
  const sum = (pick: (r: Report) => number): number => runs.reduce((n, r) => n + pick(r.report), 0);
  const passed = sum((r) => r.numPassedTests) + pyPassed;
  const failed = sum((r) => r.numFailedTests) + pyFailed + broken.length + fileFailures;
  const skipped = sum((r) => r.numPendingTests + r.numTodoTests) + pySkipped;
  const retried = runs.flatMap((r) => retriedOf(r.report, r.label));
  const out: string[] = [];
  if (retried.length > 0) {
    out.push(
      `\npassed only on a retry (${retried.length}), with the error of the failed attempt:\n${retried.join('\n')}`,
    );
  }
  if (failures.length > 0) out.push(`\nfailed:\n${failures.join('\n')}`);
  out.push(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
  return out.join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(summarize(process.argv.slice(2)));
}
