#!/usr/bin/env node
/**
 * `npm run bench`: what the hub costs on top of raw NATS JetStream on the same machine, in the same run. Starts a
 * nats-server (or uses `NATS_URL`) — each of `--servers` in turn — runs each scenario against a hub in its own
 * process and against the raw baseline on that server, prints a table of raw figure, hub figure and ratio per server,
 * and writes the JSON (`bench/results/latest.json`).
 * See docs/performance.md.
 */
import type { NatsServer } from '@ag2net/test-support';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { codeFacts, machineFacts } from './machine.js';
import { USAGE, parseOptions, type BenchOptions } from './options.js';
import { formatMachine, formatTable } from './report.js';
import {
  BenchResultsSchema,
  PartialBenchResultsSchema,
  SCENARIO_NAMES,
  type PartialBenchResults,
  type PartialServerRun,
  type ScenarioName,
  type Scenarios,
} from './results.js';
import { admission } from './scenarios/admission.js';
import { coldStart } from './scenarios/cold-start.js';
import { withScenario, type ContextBase, type ScenarioContext } from './scenarios/context.js';
import { failover } from './scenarios/failover.js';
import { fanout } from './scenarios/fanout.js';
import { hydrate } from './scenarios/hydrate.js';
import { instances } from './scenarios/instances.js';
import { largeLog } from './scenarios/large-log.js';
import { latency } from './scenarios/latency.js';
import { partitionFailover } from './scenarios/partition-failover.js';
import { runnerTakeover } from './scenarios/runner-takeover.js';
import { scale } from './scenarios/scale.js';
import { chooseServers, startServer } from './servers.js';
import { round } from './stats.js';
import { evaluateTargets } from './targets.js';
import { benchAuth } from './nats-auth.js';

const RUNNERS: { readonly [K in ScenarioName]: (ctx: ScenarioContext) => Promise<Scenarios[K]> } = {
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
};

export const HUB_PLACEMENT =
  'its own process (a bench host calling startHub with hub-service defaults and a silent logger), ' +
  'apart from the load generator; raw baselines use the same kind of process or the load generator itself';

function log(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

async function run(options: BenchOptions): Promise<PartialBenchResults> {
  const startedAt = new Date().toISOString();
  const started = performance.now();
  const loadStart = loadavg();
  const code = codeFacts();
  const runs: PartialServerRun[] = [];
  if (options.natsUrl !== undefined) {
    runs.push(await runOn({ url: options.natsUrl, binary: options.natsUrl, server: null }, options));
  } else {
    for (const binary of await chooseServers(options.servers, log)) {
      log(`nats-server ${binary}`);
      const server = await startServer(binary);
      try {
        runs.push(await runOn({ url: server.url, binary, server }, options));
      } finally {
        await server.stop();
      }
    }
  }
  return {
    schema_version: 2,
    mode: options.quick ? 'quick' : 'full',
    started_at: startedAt,
    duration_s: round((performance.now() - started) / 1000, 1),
    hub_placement: HUB_PLACEMENT,
    code,
    machine: machineFacts(loadStart),
    runs,
  };
}

/** Runs the chosen scenarios on one nats-server; its ratios are against raw NATS on that server. */
async function runOn(
  target: { readonly url: string; readonly binary: string; readonly server: NatsServer | null },
  options: BenchOptions,
): Promise<PartialServerRun> {
  const startedAt = new Date().toISOString();
  const started = performance.now();
  // As the hub's: a request of the raw baselines does not build an `Error` with a stack either.
  const nc = await connect({ servers: target.url, name: 'bench-driver', noAsyncTraces: true, ...benchAuth() });
  try {
    const version = nc.info?.version ?? 'unknown';
    log(`nats-server ${version} at ${target.url}`);
    const base: ContextBase = {
      natsUrl: target.url,
      nc,
      js: jetstream(nc),
      jsm: await jetstreamManager(nc),
      sizes: options.sizes,
      natsPid: target.server?.pid,
      profileDir: options.profileDir,
      log: (message) => log(`${version} ${message}`),
    };
    const scenarios: Partial<Scenarios> = {};
    const runOne = async <K extends ScenarioName>(name: K): Promise<void> => {
      const t0 = performance.now();
      base.log(`${name}: start`);
      scenarios[name] = await withScenario(base, name, RUNNERS[name]);
      base.log(`${name}: done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    };
    for (const name of options.only) await runOne(name);
    return {
      nats_server: { version, binary: target.binary, external: target.server === null },
      started_at: startedAt,
      duration_s: round((performance.now() - started) / 1000, 1),
      scenarios,
      targets: evaluateTargets(scenarios),
    };
  } finally {
    await nc.close();
  }
}

async function main(): Promise<number> {
  let options: BenchOptions | 'help';
  try {
    options = parseOptions(process.argv.slice(2), process.env);
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n\n${USAGE}\n`);
    return 2;
  }
  if (options === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const results = await run(options);
  // A full run must hold every scenario with finite figures; a partial one what it ran.
  const complete = options.only.length === SCENARIO_NAMES.length;
  const checked = complete ? BenchResultsSchema.parse(results) : PartialBenchResultsSchema.parse(results);
  await mkdir(dirname(options.outFile), { recursive: true });
  await writeFile(options.outFile, `${JSON.stringify(checked, null, 2)}\n`);
  process.stdout.write(`\n${formatMachine(checked)}\n\n${formatTable(checked)}\n\nJSON: ${options.outFile}\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    const text = (e: unknown): string => (e instanceof Error ? (e.stack ?? e.message) : String(e));
    const cause = err instanceof Error && err.cause !== undefined ? `\ncaused by: ${text(err.cause)}` : '';
    process.stderr.write(`bench failed: ${text(err)}${cause}\n`);
    process.exit(1);
  },
);
