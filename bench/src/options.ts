import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SCENARIO_NAMES, type ScenarioName } from './results.js';

/** How big each scenario is. The full sizes are the issue's; the quick ones only check that everything runs. */
export interface BenchSizes {
  readonly admission: {
    /** Channels posted into concurrently, one post in flight per channel. */
    readonly channels: number;
    /** Agents the channels are spread over (pairs of them). */
    readonly agents: number;
    /** Posts in flight into the one hot channel (the raw baseline can only have one: OCC serializes a subject). */
    readonly hotInFlight: number;
    /** Rounds of (raw, relay, hub); each run has its own warm-up and measurement window. */
    readonly rounds: number;
    readonly warmupMs: number;
    readonly measureMs: number;
  };
  readonly latency: { readonly warmup: number; readonly samples: number };
  readonly fanout: { readonly participants: number; readonly warmup: number; readonly samples: number };
  readonly hydrate: { readonly channels: number; readonly envelopes: number; readonly agents: number };
  /** A history written straight into the WAL: `envelopes` in `channels`, of which `open` are still open. */
  readonly coldStart: { readonly channels: number; readonly open: number; readonly envelopes: number };
  readonly scale: {
    readonly channels: number;
    readonly agents: number;
    /** Agents that are invited into every channel and ack their invites (the bench reads their inboxes). */
    readonly ackers: number;
    readonly ticks: number;
  };
  /**
   * A large log already in place: `channels × envelopesPerChannel` envelopes written straight into the WAL
   * (`writeSyntheticHistory`), `open` of the channels still open; admission (at `admission`'s sizes) and hydrate
   * are then measured on it and, in the same rounds, on a fresh log.
   */
  readonly largeLog: { readonly channels: number; readonly open: number; readonly envelopesPerChannel: number };
  readonly failover: {
    /** Conversation channels posted into, one closed loop each (a probe posts into one more). */
    readonly channels: number;
    /** Pause between a loop's ack and its next post, in ms: a steady load, not a saturating one. */
    readonly paceMs: number;
    /** Kills of the active hub, and then pauses, each measured this many times. */
    readonly runs: number;
    /** Load before the measured window, in ms. */
    readonly warmupMs: number;
    /** The window before the signal whose post→ack is "before", in ms. */
    readonly beforeMs: number;
    /** Load after every loop is flowing again, whose post→ack is "after", in ms. */
    readonly afterMs: number;
    /** How long the active hub is paused, in ms: longer than the 6 s lease, so that the standby takes over. */
    readonly pauseMs: number;
  };
  /** A runner replica killed in the middle of a turn, `runs` times (each with a fresh replica in its place). */
  readonly runnerTakeover: { readonly runs: number };
  /** Admission's spread load against several hub instances of one partitioned prefix (and one hub, one partition). */
  readonly instances: {
    /** The counts of hub instances measured on the partitioned prefix. */
    readonly hubs: readonly number[];
    readonly partitions: number;
    /** Channels per partition, one post in flight each: every partition carries the same load. */
    readonly channelsPerPartition: number;
    /** Agents the channels are spread over (pairs of them). */
    readonly agents: number;
    /** Rounds of (raw, hub) per configuration; each run has its own warm-up and measurement window. */
    readonly rounds: number;
    readonly warmupMs: number;
    readonly measureMs: number;
  };
  /** Partitioned hubs under load: one killed (then replaced), and one more joining. */
  readonly partitionFailover: {
    readonly hubs: number;
    readonly partitions: number;
    /** Closed loops per partition, each in a channel of its own (a probe posts into one more per partition). */
    readonly channelsPerPartition: number;
    readonly paceMs: number;
    /** Kills, each followed by a fresh hub joining in the dead one's place. */
    readonly runs: number;
    /** Load before the "before" window, and that window, in ms. */
    readonly warmupMs: number;
    readonly beforeMs: number;
    /** Load after recovery (or after a join settled), in ms. */
    readonly afterMs: number;
  };
}

export const FULL_SIZES: BenchSizes = {
  admission: { channels: 100, agents: 20, hotInFlight: 32, rounds: 3, warmupMs: 1_000, measureMs: 2_500 },
  latency: { warmup: 200, samples: 1_000 },
  fanout: { participants: 10, warmup: 20, samples: 200 },
  hydrate: { channels: 1_000, envelopes: 100_000, agents: 20 },
  coldStart: { channels: 10_000, open: 1_000, envelopes: 1_000_000 },
  scale: { channels: 10_000, agents: 1_000, ackers: 10, ticks: 9 },
  largeLog: { channels: 3_000, open: 300, envelopesPerChannel: 100 },
  failover: { channels: 8, paceMs: 10, runs: 3, warmupMs: 1_000, beforeMs: 3_000, afterMs: 3_000, pauseMs: 8_000 },
  runnerTakeover: { runs: 5 },
  instances: {
    hubs: [1, 2, 4],
    partitions: 16,
    channelsPerPartition: 6,
    agents: 20,
    rounds: 3,
    warmupMs: 1_000,
    measureMs: 2_500,
  },
  partitionFailover: {
    hubs: 3,
    partitions: 16,
    channelsPerPartition: 1,
    paceMs: 10,
    runs: 2,
    warmupMs: 1_000,
    beforeMs: 3_000,
    afterMs: 2_000,
  },
};

export const QUICK_SIZES: BenchSizes = {
  admission: { channels: 10, agents: 4, hotInFlight: 4, rounds: 1, warmupMs: 200, measureMs: 500 },
  latency: { warmup: 5, samples: 30 },
  fanout: { participants: 4, warmup: 2, samples: 10 },
  hydrate: { channels: 20, envelopes: 1_000, agents: 4 },
  coldStart: { channels: 200, open: 20, envelopes: 4_000 },
  scale: { channels: 100, agents: 30, ackers: 3, ticks: 3 },
  largeLog: { channels: 100, open: 10, envelopesPerChannel: 20 },
  failover: { channels: 2, paceMs: 10, runs: 1, warmupMs: 500, beforeMs: 1_000, afterMs: 1_000, pauseMs: 8_000 },
  runnerTakeover: { runs: 1 },
  instances: {
    hubs: [1, 2],
    partitions: 4,
    channelsPerPartition: 2,
    agents: 4,
    rounds: 1,
    warmupMs: 200,
    measureMs: 500,
  },
  partitionFailover: {
    hubs: 2,
    partitions: 4,
    channelsPerPartition: 1,
    paceMs: 20,
    runs: 1,
    warmupMs: 200,
    beforeMs: 500,
    afterMs: 500,
  },
};

/** Options of one `npm run bench`. */
export interface BenchOptions {
  readonly quick: boolean;
  readonly sizes: BenchSizes;
  /** Scenarios to run, in this order. */
  readonly only: readonly ScenarioName[];
  /** Where the JSON goes. */
  readonly outFile: string;
  /** An existing NATS server (`NATS_URL`); otherwise the bench starts its own. */
  readonly natsUrl: string | undefined;
  /**
   * The nats-server binaries to run every scenario on, one after the other (`--servers`), or `undefined` for the
   * default (see `chooseServers`). Ignored with `NATS_URL`.
   */
  readonly servers: readonly string[] | undefined;
  /** A directory for V8 CPU profiles of the hub process (`--cpu-prof`), or `undefined` for none. */
  readonly profileDir: string | undefined;
}

const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));

export const USAGE = `Usage: npm run bench -- [--quick] [--only ${SCENARIO_NAMES.join(',')}] [--servers BIN[,BIN…]] [--out FILE] [--profile]

  --quick     tiny sizes: checks that every scenario runs (CI smoke test), not how fast
  --only      run some scenarios; the JSON then goes to results/partial.json unless --out is given
  --servers   run the scenarios once on each of these nats-server binaries and report them side by side
              (default: NATS_SERVER_BIN if set; else the installed nats-server and the current release,
              installed into .cache/nats-server/, or the installed one alone when that cannot be installed)
  --out FILE  where to write the JSON (default results/latest.json, results/quick.json with --quick)
  --profile   run the hub process with --cpu-prof; profiles go to results/profiles/
  NATS_URL    use this nats-server instead of starting one (one run; --servers is then refused)`;

/** Parses the command line; `'help'` when usage was asked for. Throws on unknown flags or scenario names. */
export function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv): BenchOptions | 'help' {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      out: { type: 'string' },
      servers: { type: 'string' },
      profile: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) return 'help';
  const natsUrl = env['NATS_URL'] || undefined;
  const servers = values.servers?.split(',').map((bin) => bin.trim());
  if (servers !== undefined && (servers.length === 0 || servers.includes('')))
    throw new Error('--servers takes a comma-separated list of nats-server binaries');
  if (servers !== undefined && natsUrl !== undefined)
    throw new Error('--servers starts its own servers; it cannot be combined with NATS_URL');
  const only = values.only === undefined ? SCENARIO_NAMES : values.only.split(',').map(scenarioName);
  const partial = only.length !== SCENARIO_NAMES.length;
  const defaultOut = partial ? 'partial.json' : values.quick ? 'quick.json' : 'latest.json';
  return {
    quick: values.quick,
    sizes: values.quick ? QUICK_SIZES : FULL_SIZES,
    only,
    outFile: values.out ?? `${RESULTS_DIR}${defaultOut}`,
    natsUrl,
    servers,
    profileDir: values.profile ? `${RESULTS_DIR}profiles` : undefined,
  };
}

function scenarioName(text: string): ScenarioName {
  const found = SCENARIO_NAMES.find((n) => n === text.trim());
  if (found === undefined)
    throw new Error(`unknown scenario ${JSON.stringify(text)}; choose from ${SCENARIO_NAMES.join(', ')}`);
  return found;
}
