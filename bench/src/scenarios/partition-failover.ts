import { hubNames, type HubNames } from '@ag2net/protocol';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { HostProcess } from '../host/client.js';
import { checkLogs } from '../load/log-check.js';
import {
  channelIdsByPartition,
  holdingsOf,
  movedBetween,
  untilSettled,
  type Holdings,
  type RunningHub,
} from '../load/partitions.js';
import type { AckedPost, PostLoad, PostTarget } from '../load/post-load.js';
import type { PartitionFailoverResult, PartitionJoinResult, PartitionKillResult } from '../results.js';
import { round, summarize } from '../stats.js';
import type { ScenarioContext } from './context.js';
import {
  ATTEMPT_TIMEOUT_MS,
  failoverLoad,
  leaseTtlOf,
  openConversations,
  startHubIn,
  startHubs,
  targetOf,
} from './hub-hosts.js';

/** A single-attempt probe post goes into each partition's probe channel this often, ms. */
const PROBE_EVERY_MS = 50;
/** The bench gives up on a recovery or a join (and fails) after this long, ms. */
const EVENT_TIMEOUT_MS = 120_000;
/** How often the hubs are asked what they serve during an event, ms. */
const POLL_MS = 20;

/** What every event of the scenario shares. */
interface Setup {
  readonly ctx: ScenarioContext;
  readonly names: HubNames;
  /** Starts the load: the loops and the probes. */
  readonly load: () => PostLoad;
  /** A fresh host (not yet running a hub), and the hub started in it. */
  readonly newHost: () => Promise<HostProcess>;
  readonly startIn: (host: HostProcess) => Promise<RunningHub>;
}

/**
 * Failover with partitions. Hubs (3) on one prefix whose channels are spread over 16 partitions, each partition
 * served by its preferred owner; closed loops post into a channel of each partition (one post in flight each,
 * through a `HubRpc` that retries as clients do) and a single-attempt probe post goes into one more channel of each
 * partition every 50 ms. Then, under that load:
 *
 * - kill: one hub gets SIGKILL; the others see its connection gone and take its partitions over (about a second
 *   later). Measured per partition of the killed hub: the time from the signal to the first ack of a post sent after
 *   it; and the other hubs' post→ack before and during, which must not stall. A fresh hub then joins in its place;
 * - join: a hub is added; it is handed its share only once it has been live for two lease times, each hand-over a
 *   graceful step-down by the old owner. Measured: the time until it served its first partition, and until the hubs
 *   settled again (every partition served once, each hub its fair share); the longest post→ack into a partition that
 *   moved; posts that failed (expected none).
 *
 * At the end every channel's log is read back: every acked post must be there once, gap-free.
 */
export async function partitionFailover(ctx: ScenarioContext): Promise<PartitionFailoverResult> {
  const s = ctx.sizes.partitionFailover;
  const prefix = ctx.prefix('pfo');
  const names = hubNames(prefix, s.partitions);
  let hostCount = 0;
  const newHost = (): Promise<HostProcess> => ctx.host(`hub-${hostCount++}`);
  const started = await startHubs(ctx, { prefix, partitions: s.partitions, count: s.hubs, host: newHost });
  let hubs = started.hubs;

  const rpc = ctx.rpc(prefix);
  const perPartition = s.channelsPerPartition + 1;
  const ids = channelIdsByPartition(s.partitions, perPartition).flat();
  ctx.log(`opening ${ids.length} conversations, ${perPartition} in each of ${s.partitions} partitions`);
  const agents = Math.max(4, Math.min(ids.length, 32));
  const channels = await openConversations(ctx, rpc, { label: 'pfo', agents, channelIds: ids });
  const probes: PostTarget[] = [];
  const loops: PostTarget[] = [];
  for (const c of channels) {
    if (probes.some((p) => names.partitionOf(p.channelId) === names.partitionOf(c.channelId))) loops.push(targetOf(c));
    else probes.push(targetOf(c));
  }
  const initialSettleMs =
    (await untilSettled(hubs, s.partitions, { timeoutMs: EVENT_TIMEOUT_MS })) - started.firstActive;
  ctx.log(
    `${hubs.length} hubs settled on ${s.partitions} partitions ${(initialSettleMs / 1000).toFixed(1)} s after the first`,
  );
  const leaseTtlMs = await leaseTtlOf(ctx, names);
  const load = failoverLoad(ctx, { prefix, targets: loops, probes, paceMs: s.paceMs, probeEveryMs: PROBE_EVERY_MS });
  const startIn = (host: HostProcess): Promise<RunningHub> =>
    startHubIn(ctx, host, { prefix, partitions: s.partitions, standby: true });
  const setup: Setup = { ctx, names, load, newHost, startIn };

  const acked: AckedPost[] = [];
  const kills: PartitionKillResult[] = [];
  const joins: PartitionJoinResult[] = [];
  const join = async (): Promise<void> => {
    const { result, hub, acked: a } = await measureJoin(setup, hubs);
    acked.push(...a);
    joins.push(result);
    hubs = [...hubs, hub];
  };
  for (let r = 0; r < s.runs; r += 1) {
    const victim = hubs[r % hubs.length];
    if (victim === undefined) throw new Error('no hub to kill');
    const { result, acked: a } = await measureKill(setup, hubs, victim);
    acked.push(...a);
    kills.push(result);
    hubs = hubs.filter((h) => h !== victim);
    await join();
  }
  await join();
  const read = await checkLogs(rpc, channels, acked);
  ctx.log(`all ${acked.length} acked posts found once in ${read} log entries`);
  return {
    partitions: s.partitions,
    channels_per_partition: s.channelsPerPartition,
    pace_ms: s.paceMs,
    probe_every_ms: PROBE_EVERY_MS,
    attempt_timeout_ms: ATTEMPT_TIMEOUT_MS,
    lease_ttl_ms: leaseTtlMs,
    initial_settle_ms: round(initialSettleMs, 1),
    kills,
    joins,
    acked_posts: acked.length,
  };
}

const latency = (p: AckedPost): number => p.ackedAt - p.sentAt;

/** SIGKILL of `victim` under load, until every partition it served acks again. */
async function measureKill(
  setup: Setup,
  hubs: readonly RunningHub[],
  victim: RunningHub,
): Promise<{ result: PartitionKillResult; acked: AckedPost[] }> {
  const { ctx, names } = setup;
  const s = ctx.sizes.partitionFailover;
  const survivors = hubs.filter((h) => h !== victim);
  const load = setup.load();
  // What the victim and the others serve is read just before the signal: that is what the kill takes away.
  let held: readonly number[] = [];
  let before: Holdings = new Map();
  let signalAt = Number.NaN;
  let recoveredAt = Number.NaN;
  let takenOverMs = Number.NaN;
  let settledMs = Number.NaN;
  let after: Holdings = new Map();
  const firstAck = new Map<number, number>();
  try {
    await sleep(s.warmupMs + s.beforeMs);
    before = await holdingsOf(hubs);
    held = before.get(victim.hubId) ?? [];
    ctx.log(`kill: ${victim.hubId} (partitions ${held.join(',')}) of ${hubs.length} hubs`);
    signalAt = performance.now();
    victim.host.signal('SIGKILL');
    const takeover = (async () => {
      for (;;) {
        const holdings = await holdingsOf(survivors);
        const served = new Set([...holdings.values()].flat());
        if (held.every((k) => served.has(k))) return performance.now() - signalAt;
        if (performance.now() - signalAt > EVENT_TIMEOUT_MS)
          throw new Error('the killed hub’s partitions stayed unserved');
        await sleep(POLL_MS);
      }
    })();
    // Awaited below; this only keeps a failure meanwhile from going unhandled.
    takeover.catch(() => undefined);
    let scanned = 0;
    while (held.some((k) => !firstAck.has(k))) {
      for (; scanned < load.acked.length; scanned += 1) {
        const p = load.acked[scanned];
        if (p === undefined || p.sentAt < signalAt) continue;
        const k = names.partitionOf(p.channelId);
        if (held.includes(k) && !firstAck.has(k)) firstAck.set(k, p.ackedAt - signalAt);
      }
      if (performance.now() - signalAt > EVENT_TIMEOUT_MS)
        throw new Error('a killed hub’s partition never acked again');
      await sleep(5);
    }
    recoveredAt = performance.now();
    takenOverMs = await takeover;
    // The survivors then balance what they serve between them (their fair shares of the partitions).
    settledMs = (await untilSettled(survivors, names.partitions, { timeoutMs: EVENT_TIMEOUT_MS })) - signalAt;
    after = await holdingsOf(survivors);
    await sleep(s.afterMs);
  } finally {
    await load.stop();
  }
  const loopPosts = load.acked.filter((p) => p.loop >= 0);
  const inVictim = (p: AckedPost): boolean => held.includes(names.partitionOf(p.channelId));
  const others = loopPosts.filter((p) => !inVictim(p));
  const firstAcks = held.map((k) => round(firstAck.get(k) ?? Number.NaN, 1));
  const result: PartitionKillResult = {
    hubs: hubs.length,
    partitions: [...held],
    first_ack_ms: firstAcks,
    first_ack_max_ms: Math.max(...firstAcks),
    taken_over_ms: round(takenOverMs, 1),
    settled_ms: round(settledMs, 1),
    moved_between_survivors: movedBetween(before, after).filter((k) => !held.includes(k)).length,
    max_latency_ms: round(
      Math.max(0, ...loopPosts.filter((p) => inVictim(p) && p.ackedAt >= signalAt).map(latency)),
      1,
    ),
    others_before: summarize(
      others.filter((p) => p.sentAt >= signalAt - s.beforeMs && p.ackedAt < signalAt).map(latency),
    ),
    others_during: summarize(others.filter((p) => p.sentAt >= signalAt && p.sentAt <= recoveredAt).map(latency)),
    acked: load.acked.length,
    failed: load.failed.length,
  };
  ctx.log(
    `kill: every partition acked again within ${result.first_ack_max_ms} ms (served again after ` +
      `${result.taken_over_ms} ms); others' p99 ${result.others_before.p99_ms} → ${result.others_during.p99_ms} ms; ` +
      `${result.failed} failed`,
  );
  return { result, acked: load.acked };
}

/** A hub added to `hubs` under load, until every partition is served by its preferred owner again. */
async function measureJoin(
  setup: Setup,
  hubs: readonly RunningHub[],
): Promise<{ result: PartitionJoinResult; hub: RunningHub; acked: AckedPost[] }> {
  const { ctx, names } = setup;
  const s = ctx.sizes.partitionFailover;
  const host = await setup.newHost();
  const load = setup.load();
  let joinAt = Number.NaN;
  let settledAt = Number.NaN;
  let firstPartitionMs = 0;
  let hub: RunningHub | null = null;
  let before: Holdings = new Map();
  let after: Holdings = new Map();
  try {
    await sleep(s.warmupMs + s.beforeMs);
    before = await holdingsOf(hubs);
    joinAt = performance.now();
    hub = await setup.startIn(host);
    const all = [...hubs, hub];
    const joined = hub;
    ctx.log(`join: ${joined.hubId} as hub ${all.length}`);
    settledAt = await untilSettled(all, names.partitions, {
      timeoutMs: EVENT_TIMEOUT_MS,
      onPoll: (holdings, at) => {
        if (firstPartitionMs === 0 && (holdings.get(joined.hubId) ?? []).length > 0) firstPartitionMs = at - joinAt;
      },
    });
    after = await holdingsOf(all);
    await sleep(s.afterMs);
  } finally {
    await load.stop();
  }
  if (hub === null) throw new Error('the joining hub did not start');
  const share = after.get(hub.hubId) ?? [];
  const movedPartitions = movedBetween(before, after);
  const loopPosts = load.acked.filter((p) => p.loop >= 0);
  const moved = loopPosts.filter((p) => movedPartitions.includes(names.partitionOf(p.channelId)));
  const result: PartitionJoinResult = {
    hubs_before: hubs.length,
    share: share.length,
    moved: movedPartitions.length,
    first_partition_ms: round(firstPartitionMs, 1),
    settled_ms: round(settledAt - joinAt, 1),
    max_latency_moved_ms: round(
      Math.max(0, ...moved.filter((p) => p.ackedAt >= joinAt && p.sentAt <= settledAt).map(latency)),
      1,
    ),
    before: summarize(loopPosts.filter((p) => p.sentAt >= joinAt - s.beforeMs && p.ackedAt < joinAt).map(latency)),
    during: summarize(loopPosts.filter((p) => p.sentAt >= joinAt && p.sentAt <= settledAt).map(latency)),
    acked: load.acked.length,
    failed: load.failed.length,
  };
  ctx.log(
    `join: first partition after ${result.first_partition_ms} ms, settled after ${result.settled_ms} ms ` +
      `(${result.moved} partitions moved, ${result.share} to the new hub); longest post→ack in a moved partition ${result.max_latency_moved_ms} ms; ` +
      `${result.failed} failed`,
  );
  return { result, hub, acked: load.acked };
}
