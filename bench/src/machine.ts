import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Code, Machine } from './results.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Which code was measured: the commit, and the tracked files outside bench/ that differ from it. */
export function codeFacts(): Code {
  const git = (...args: string[]): string | null => {
    try {
      return execFileSync('git', ['-C', ROOT, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    } catch {
      return null;
    }
  };
  const commit = git('rev-parse', 'HEAD')?.trim() ?? 'unknown';
  const changed = (git('status', '--porcelain', '--untracked-files=no', '--', '.', ':!bench') ?? '')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => line.slice(3));
  return { commit, changed_files: changed };
}

/** Facts about the machine the numbers were taken on; the load averages show how busy the shared machine was. */
export function machineFacts(loadavgStart: readonly number[]): Machine {
  const cpuList = cpus();
  return {
    cpus: cpuList.length,
    cpu_model: cpuList[0]?.model.trim() ?? 'unknown',
    total_memory_mb: Math.round(totalmem() / 2 ** 20),
    platform: process.platform,
    arch: process.arch,
    node: process.version,
    loadavg_start: loadavgStart.map((n) => Math.round(n * 100) / 100),
    loadavg_end: loadavg().map((n) => Math.round(n * 100) / 100),
  };
}
