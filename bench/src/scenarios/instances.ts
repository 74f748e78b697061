import { CONVERSATION_TYPE } from '@ag2net/adapters';
import { hubNames } from '@ag2net/protocol';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { CpuMeter } from '../cpu.js';
import type { HostProcess } from '../host/client.js';
import { runClosedLoops, throughputOf, type LoopRun } from '../load/closed-loop.js';
import {
  closeMailboxes,
  mapLimit,
  openChannel,
  openMailboxes,
  pairFor,
  registerAgents,
  waitForDelivery,
} from '../load/network.js';
import {
  channelIdsByPartition,
  holdingsOf,
  isSettled,
  untilSettled,
  type Holdings,
  type RunningHub,
} from '../load/partitions.js';
import { LeanPoster, storedPayload, textTemplate, type TextTemplate } from '../load/poster.js';
import { rotatingRounds } from '../load/rotating-rounds.js';
import { RawAppender } from '../raw/appender.js';
import { createRawWal, rawNames } from '../raw/streams.js';
import type { InstancesConfigResult, InstancesResult, Throughput } from '../results.js';
import { ratio, round } from '../stats.js';
import { deliveryRateOf, drained, type DrainedRun } from './admission.js';
import type { ScenarioContext } from './context.js';
import { startHubs, type StartedHubs } from './hub-hosts.js';

/** How long the hubs of a configuration may take to settle on the assignment, ms (a hand-over waits 2 lease times). */
const SETTLE_TIMEOUT_MS = 120_000;
/** The window over which the hubs' CPU without load is read, ms. */
const IDLE_WINDOW_MS = 5_000;

/** One configuration: this many hub instances on one prefix whose channels are spread over `partitions`. */
interface Config {
  readonly hubs: number;
  readonly partitions: number;
}

/**
 * Hub instances. The admission scenario's spread load (closed loops posting `EV_TEXT`, one post in flight per
 * channel) against one prefix served by 1, 2 and 4 hubs (host processes) with its channels spread over 16 partitions,
 * and for reference by one hub with one partition. The channels are spread evenly over the partitions, so each hub's
 * share of the load is its share of the partitions. Each configuration gets its own prefix and hosts, all running at
 * once; the bench waits until the hubs of each have settled (`hubState().held`: every partition served once, each hub
 * its fair share) and then measures in rounds, each round running the raw baseline (the hub's appends, done directly
 * over as many subjects) and every configuration in a rotating order, so that the shared machine's noise falls on all
 * of them alike and every ratio is against raw NATS measured in the same minutes. The hubs of the configurations not
 * being measured stay up, idle; what they use without load is read at the end (`idle_hubs_core_share`).
 *
 * Besides envelopes/s it reads each process's CPU over the windows: µs per envelope of each hub (over the envelopes
 * that hub admitted), of nats-server and of the load generator. From them, a model: N hubs given a core each admit
 * as much as the busiest hub can (1 s of CPU ÷ its µs per envelope ÷ its share), and this machine admits at most its
 * cores ÷ the CPU all processes spend per envelope.
 */
export async function instances(ctx: ScenarioContext): Promise<InstancesResult> {
  const s = ctx.sizes.instances;
  const configs: Config[] = [{ hubs: 1, partitions: 1 }, ...s.hubs.map((hubs) => ({ hubs, partitions: s.partitions }))];
  const appended = rawNames(ctx.prefix('insapp'));
  await createRawWal(ctx.jsm, appended);
  // Every configuration's hubs start first, so that the later ones' hand-overs (two lease times after they join) run
  // while the others set up.
  const started = await Promise.all(configs.map((config) => startConfig(ctx, config)));
  const prepared: Prepared[] = [];
  for (const hubs of started) prepared.push(await prepare(ctx, hubs));
  const first = prepared[0]?.channels[0];
  if (first === undefined) throw new Error('no channels');
  const appender = new RawAppender(ctx.js, appended, storedPayload(first));
  const rawMeter = new CpuMeter(ctx.natsPid, new Map());
  const channels = s.partitions * s.channelsPerPartition;
  const raw = (): Promise<LoopRun> =>
    runClosedLoops({
      warmupMs: s.warmupMs,
      measureMs: s.measureMs,
      meter: rawMeter,
      loops: channels,
      op: (i) => appender.append(`s${i}`),
    });
  const kinds = Object.fromEntries(prepared.map((p) => [p.label, p.run]));
  ctx.log(`${s.rounds} rounds × (raw appends, ${prepared.map((p) => p.label).join(', ')}) into ${channels} channels`);
  const rounds = await rotatingRounds(s.rounds, { raw, ...kinds });
  const rawThroughput = throughputOf(rounds.raw ?? []);
  const results: InstancesConfigResult[] = [];
  for (const p of prepared) {
    if (!isSettled(await holdingsOf(p.hubs.hubs), p.config.partitions)) {
      throw new Error(`${p.label}: the assignment moved while measured`);
    }
    const hub = throughputOf(p.runs.map((d) => d.run));
    ctx.log(`${p.label}: hub ${hub.per_s} env/s, raw ${rawThroughput.per_s}/s`);
    results.push(resultOf({ ...p, raw: rawThroughput, hub }));
  }
  const idle = await idleCoreShare(ctx, prepared);
  return {
    partitions: s.partitions,
    channels,
    agents: s.agents,
    cores: availableParallelism(),
    idle_hubs_core_share: idle,
    configs: results,
  };
}

/** What the hubs of every configuration together use with no load at all (leases, presence, sweeps), in cores. */
async function idleCoreShare(ctx: ScenarioContext, prepared: readonly Prepared[]): Promise<number> {
  const hosts = new Map(prepared.flatMap((p) => p.hubs.hubs.map((h, i) => [`${p.label}/${i}`, h.host] as const)));
  const meter = new CpuMeter(undefined, hosts);
  const before = await meter.snapshot();
  await sleep(IDLE_WINDOW_MS);
  const after = await meter.snapshot();
  let used = 0;
  for (const name of hosts.keys()) used += (after.get(name) ?? 0) - (before.get(name) ?? 0);
  return round(used / (IDLE_WINDOW_MS / 1000), 3);
}

/** One configuration, set up and settled: its hubs, channels and the run that measures it. */
interface Prepared {
  readonly label: string;
  readonly config: Config;
  readonly hubs: ConfigHubs;
  readonly channels: readonly TextTemplate[];
  readonly holdings: Holdings;
  readonly settleMs: number;
  readonly settledAfterMs: number;
  /** Posts acked inside the windows, by hub. */
  readonly posts: number[];
  /** Each measured run, in order. */
  readonly runs: DrainedRun[];
  /** One measured run (warm-up, window, then until delivery caught up). */
  readonly run: () => Promise<void>;
}

/** A configuration's hubs, and when the first of them became active. */
interface ConfigHubs extends StartedHubs {
  readonly config: Config;
  readonly prefix: string;
}

async function prepare(ctx: ScenarioContext, started: ConfigHubs): Promise<Prepared> {
  const s = ctx.sizes.instances;
  const { config, prefix, hubs } = started;
  const { hubs: count, partitions } = config;
  const label = `${count}h${partitions}p`;
  const names = hubNames(prefix, partitions);
  const rpc = ctx.rpc(prefix);
  const agents = await registerAgents(rpc, 'ins', s.agents);
  const mailboxes = await openMailboxes(rpc, ctx.js, names, agents);
  const ids = channelIdsByPartition(s.partitions, s.channelsPerPartition).flat();
  const setupFrom = performance.now();
  const channels = await mapLimit(ids, 20, async (channelId, i) => {
    const p = pairFor(agents, i);
    await openChannel(rpc, { type: CONVERSATION_TYPE, creator: p.creator, invitees: [p.invitee], channelId });
    return textTemplate(channelId, p.creator);
  });
  await closeMailboxes(mailboxes.values());
  const settledAt = await untilSettled(hubs, partitions, { timeoutMs: SETTLE_TIMEOUT_MS });
  const settleMs = settledAt - setupFrom;
  const settledAfterMs = settledAt - started.firstActive;
  await waitForDelivery(ctx.jsm, names);
  const holdings = await holdingsOf(hubs);
  ctx.log(`${label}: settled ${(settledAfterMs / 1000).toFixed(1)} s after the first hub: ${describe(holdings)}`);

  const poster = new LeanPoster(ctx.nc, names);
  const subjects = channels.map((t) => poster.subjectFor(t.envelope.sender_id, t.envelope.channel_id));
  const hubIndex = ownerIndexes(
    hubs,
    holdings,
    channels.map((t) => names.partitionOf(t.envelope.channel_id)),
  );
  const meter = new CpuMeter(ctx.natsPid, new Map(hubs.map((h, i) => [hostName(i), h.host])));
  const posts = hubs.map(() => 0);
  const runs: DrainedRun[] = [];
  const run = async (): Promise<void> => {
    const windowStart = performance.now() + s.warmupMs;
    const windowEnd = windowStart + s.measureMs;
    const measured = await drained(() => waitForDelivery(ctx.jsm, names), {
      warmupMs: s.warmupMs,
      measureMs: s.measureMs,
      meter,
      loops: channels.length,
      op: async (i) => {
        await poster.postTo(subjects[i] ?? '', channels[i]?.withId().body ?? '');
        const t = performance.now();
        const k = hubIndex[i];
        if (t >= windowStart && t <= windowEnd && k !== undefined) posts[k] = (posts[k] ?? 0) + 1;
      },
    });
    runs.push(measured);
  };
  return { label, config, hubs: started, channels, holdings, settleMs, settledAfterMs, posts, runs, run };
}

/** Starts a configuration's hubs on a fresh prefix: the first until it is active, then the others (they join it). */
async function startConfig(ctx: ScenarioContext, config: Config): Promise<ConfigHubs> {
  const { hubs: count, partitions } = config;
  const prefix = ctx.prefix(`ins${count}p${partitions}`);
  const hosts = await Promise.all(Array.from({ length: count }, (_, i) => ctx.host(`${count}x${partitions}-${i}`)));
  const host = (i: number): HostProcess => {
    const h = hosts[i];
    if (h === undefined) throw new Error(`no host ${i}`);
    return h;
  };
  return { config, prefix, ...(await startHubs(ctx, { prefix, partitions, count, host })) };
}

const hostName = (i: number): string => `hub-${i}`;

/** For each channel (given by its partition), the index in `hubs` of the hub serving its partition. */
function ownerIndexes(hubs: readonly RunningHub[], holdings: Holdings, channelPartitions: readonly number[]): number[] {
  const ownerOf = new Map<number, number>();
  hubs.forEach((h, i) => {
    for (const k of holdings.get(h.hubId) ?? []) ownerOf.set(k, i);
  });
  return channelPartitions.map((k) => {
    const owner = ownerOf.get(k);
    if (owner === undefined) throw new Error(`nobody serves partition ${k}`);
    return owner;
  });
}

function describe(holdings: Holdings): string {
  return [...holdings.values()].map((held) => `${held.length}`).join(' + ') + ' partitions';
}

interface Measured {
  readonly config: Config;
  readonly hubs: ConfigHubs;
  readonly holdings: Holdings;
  readonly settleMs: number;
  readonly settledAfterMs: number;
  readonly raw: Throughput;
  readonly hub: Throughput;
  /** Posts acked inside the windows, by hub. */
  readonly posts: readonly number[];
  readonly runs: readonly DrainedRun[];
}

/** One configuration's figures, per hub and as a model. */
function resultOf(m: Measured): InstancesConfigResult {
  const total = m.hub.count;
  const cpuOf = (name: string): { core_share: number; us_per_op: number } =>
    m.hub.cpu[name] ?? { core_share: 0, us_per_op: 0 };
  const perHub = m.hubs.hubs.map((h, i) => {
    const posts = m.posts[i] ?? 0;
    const cpu = cpuOf(hostName(i));
    // CPU µs over the windows ÷ the envelopes this hub admitted in them.
    const usPerOwn = posts === 0 ? 0 : (cpu.us_per_op * total) / posts;
    return {
      partitions: m.holdings.get(h.hubId)?.length ?? 0,
      posts,
      share: round(total === 0 ? 0 : posts / total),
      core_share: cpu.core_share,
      us_per_env: Math.round(usPerOwn),
    };
  });
  const hubsUs = perHub.reduce((a, h, i) => a + cpuOf(hostName(i)).us_per_op, 0);
  const natsUs = cpuOf('nats-server').us_per_op;
  const driverUs = cpuOf('driver').us_per_op;
  // The busiest hub saturates its core first: at total rate R it spends R × share × µs per envelope each second.
  const dedicated = Math.min(
    ...perHub.map((h) => (h.share * h.us_per_env === 0 ? Infinity : 1e6 / (h.share * h.us_per_env))),
  );
  const meanUs = perHub.reduce((a, h) => a + h.us_per_env, 0) / perHub.length;
  const cores = availableParallelism();
  const allUs = hubsUs + natsUs + driverUs;
  return {
    hubs: m.config.hubs,
    partitions: m.config.partitions,
    settle_ms: round(m.settleMs, 1),
    settled_after_ms: round(m.settledAfterMs, 1),
    raw: m.raw,
    hub: m.hub,
    ratio: ratio(m.hub.per_s, m.raw.per_s),
    delivery_per_s: deliveryRateOf(m.runs),
    per_hub: perHub,
    cpu_us_per_env: { hubs: hubsUs, nats_server: natsUs, driver: driverUs },
    model: {
      core_per_hub_per_s: round(dedicated, 1),
      core_per_hub_even_per_s: round(meanUs === 0 ? 0 : (m.config.hubs * 1e6) / meanUs, 1),
      nats_cores_at_that_rate: round((dedicated * natsUs) / 1e6, 2),
      this_machine_per_s: round(allUs === 0 ? 0 : (cores * 1e6) / allUs, 1),
    },
  };
}
