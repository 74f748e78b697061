import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_INBOX_ACK_WAIT_MS } from '@ag2net/hub';
import { findNatsServer } from '@ag2net/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import { QUICK_SIZES } from '../src/options.js';
import { BenchResultsSchema, SCENARIO_NAMES } from '../src/results.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dirs: string[] = [];

afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

/**
 * Runs the bench CLI as `npm run bench:quick` does, on the installed nats-server only (the default would also fetch
 * and run the current release), writing the JSON to `out`; resolves with its exit code.
 */
function runQuick(out: string, server: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(
    process.execPath,
    [
      '--conditions=@ag2net/source',
      '--import',
      'tsx',
      'bench/src/main.ts',
      '--quick',
      '--servers',
      server,
      '--out',
      out,
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

// Checks that the benchmark runs end to end and reports every figure, never how fast anything is.
describe('npm run bench -- --quick', () => {
  it('runs every scenario against a real hub and writes a JSON with a finite figure for each field', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ag2net-bench-'));
    dirs.push(dir);
    const out = join(dir, 'quick.json');

    const server = findNatsServer();

    const { code, output } = await runQuick(out, server);
    expect(code, output).toBe(0);

    const results = BenchResultsSchema.parse(JSON.parse(await readFile(out, 'utf8')));
    expect(results.mode).toBe('quick');
    expect(results.runs).toHaveLength(1);
    const [run] = results.runs;
    if (run === undefined) throw new Error('no run');
    expect(run.nats_server.binary).toBe(server);
    expect(run.nats_server.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(Object.keys(run.scenarios).sort()).toEqual([...SCENARIO_NAMES].sort());
    expect(run.targets.map((t) => t.id)).toEqual([
      'admission_spread',
      'admission_hot',
      'post_ack_p50',
      'hydrate',
      'cold_start',
      'cold_start_open_rate',
      'memory_per_channel',
      'sweeper_tick',
      'runner_takeover',
    ]);
    const {
      admission,
      latency,
      fanout,
      hydrate,
      coldStart,
      scale,
      largeLog,
      failover,
      runnerTakeover,
      instances,
      partitionFailover,
    } = run.scenarios;
    expect(admission.spread.channels).toBe(QUICK_SIZES.admission.channels);
    expect(admission.spread.hub.errors).toBe(0);
    expect(admission.hot.hub.errors).toBe(0);
    expect(latency.hub_ack.count).toBe(QUICK_SIZES.latency.samples);
    expect(latency.hub_delivery.count).toBe(QUICK_SIZES.latency.samples);
    expect(fanout.hub_all.count).toBe(QUICK_SIZES.fanout.samples);
    expect(fanout.raw_all.count).toBe(QUICK_SIZES.fanout.samples);
    expect(hydrate.envelopes_posted).toBe(QUICK_SIZES.hydrate.envelopes);
    expect(hydrate.wal_messages).toBeGreaterThan(hydrate.envelopes_posted);
    expect(coldStart.wal_messages).toBe(QUICK_SIZES.coldStart.envelopes);
    expect(coldStart.open_envelopes).toBe(
      (QUICK_SIZES.coldStart.envelopes / QUICK_SIZES.coldStart.channels) * QUICK_SIZES.coldStart.open,
    );
    expect(scale.channels).toBe(QUICK_SIZES.scale.channels);
    expect(scale.tick.count).toBe(QUICK_SIZES.scale.ticks);
    expect(largeLog.history_messages).toBe(QUICK_SIZES.largeLog.channels * QUICK_SIZES.largeLog.envelopesPerChannel);
    expect(largeLog.hydrate_large.wal_messages).toBeGreaterThan(largeLog.history_messages);
    expect(largeLog.spread.channels).toBe(QUICK_SIZES.admission.channels);
    expect(largeLog.spread.fresh.errors + largeLog.spread.large.errors).toBe(0);
    expect(largeLog.hot.fresh.errors + largeLog.hot.large.errors).toBe(0);
    expect(failover.kill.runs).toHaveLength(QUICK_SIZES.failover.runs);
    expect(failover.pause.runs).toHaveLength(QUICK_SIZES.failover.runs);
    expect(failover.kill.failed_posts + failover.pause.failed_posts).toBe(0);
    expect(runnerTakeover.runs).toHaveLength(QUICK_SIZES.runnerTakeover.runs);
    // The agent's inbox consumer carries hub-service's default ack wait, which bounds the takeover.
    expect(runnerTakeover.inbox_ack_wait_ms).toBe(DEFAULT_INBOX_ACK_WAIT_MS);
    expect(instances.configs.map((c) => c.hubs)).toEqual([1, ...QUICK_SIZES.instances.hubs]);
    expect(instances.configs.every((c) => c.hub.errors === 0)).toBe(true);
    expect(partitionFailover.kills).toHaveLength(QUICK_SIZES.partitionFailover.runs);
    expect(partitionFailover.joins).toHaveLength(QUICK_SIZES.partitionFailover.runs + 1);
    expect([...partitionFailover.kills, ...partitionFailover.joins].every((e) => e.failed === 0)).toBe(true);
    expect(output).toContain('| Scenario');
  }, 480_000);
});
