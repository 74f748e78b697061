import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { summarize } from '../scripts/ci/summary.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ag2net-ci-summary-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function report(name: string, body: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, JSON.stringify(body));
  return path;
}

const passed = (fullName: string) => ({ fullName, status: 'passed', failureMessages: [] });

describe("CI's closing lines", () => {
  it('lists failed tests, files that failed outside their tests, retried passes and Python failures, then the counts', async () => {
    const suite = await report('suite.json', {
      numPassedTests: 3,
      numFailedTests: 1,
      numPendingTests: 1,
      numTodoTests: 0,
      testResults: [
        {
          name: join(process.cwd(), 'test/a.test.ts'),
          status: 'failed',
          message: '',
          assertionResults: [
            passed('a keeps going'),
            { fullName: 'a breaks', status: 'failed', failureMessages: ['AssertionError: expected 1 to be 2\n  at a'] },
            { fullName: 'a flakes', status: 'passed', failureMessages: ['Error: timed out once'] },
          ],
        },
        {
          name: join(process.cwd(), 'test/b.test.ts'),
          status: 'failed',
          message: 'Error: hook timed out in 30000ms',
          assertionResults: [],
        },
      ],
    });
    const floor = await report('floor.json', {
      numPassedTests: 5,
      numFailedTests: 0,
      testResults: [{ name: join(process.cwd(), 'test/c.test.ts'), status: 'passed', assertionResults: [] }],
    });
    const pythonFailed = join(dir, 'python-failed.txt');
    await writeFile(pythonFailed, 'tests.test_x::test_y: assert 1 == 2\n');
    const text = summarize(['--python', '10 1 2', '--python-failed', pythonFailed, suite, floor]);
    expect(text.split('\n')).toEqual([
      '',
      'passed only on a retry (1), with the error of the failed attempt:',
      '  ~ [suite] test/a.test.ts > a flakes',
      '      Error: timed out once',
      '',
      'failed:',
      '  ✗ [suite] test/a.test.ts > a breaks',
      '      AssertionError: expected 1 to be 2',
      '        at a',
      '  ✗ [suite] test/b.test.ts (the file itself)',
      '      Error: hook timed out in 30000ms',
      '  ✗ [python] tests.test_x::test_y: assert 1 == 2',
      '',
      '18 passed, 3 failed, 3 skipped',
    ]);
  });

  it('counts a missing or malformed report as a failure, and skips an empty path (no floor run)', async () => {
    const bad = await report('bad.json', { hello: 'world' });
    const text = summarize(['--python', '4 0 0', join(dir, 'missing.json'), '', bad]);
    expect(text.split('\n')).toEqual([
      '',
      'failed:',
      `  ✗ [suite] no report at ${join(dir, 'missing.json')}: the run ended before writing it`,
      `  ✗ [floor] the report at ${bad} is not a vitest JSON report`,
      '',
      '4 passed, 2 failed, 0 skipped',
    ]);
  });
});
