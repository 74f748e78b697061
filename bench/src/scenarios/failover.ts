import type { HubRpc } from '@ag2net/client';
import { hubNames, newId } from '@ag2net/protocol';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { HostProcess } from '../host/client.js';
import { checkLogs, type LoggedChannel } from '../load/log-check.js';
import { waitForDelivery } from '../load/network.js';
import type { RunningHub } from '../load/partitions.js';
import type { PostLoad } from '../load/post-load.js';
import type { FailoverEventResult, FailoverResult, FailoverRunResult, PauseRunResult } from '../results.js';
import { round, spreadOf, summarize } from '../stats.js';
import type { ScenarioContext } from './context.js';
import { ATTEMPT_TIMEOUT_MS, failoverLoad, leaseTtlOf, openConversations, startHubIn, targetOf } from './hub-hosts.js';

/** A single-attempt probe post is sent this often, ms. */
const PROBE_EVERY_MS = 25;
/** The bench gives up on a failover (and fails) after this long, ms. */
const RECOVERY_TIMEOUT_MS = 60_000;
/** `health` is asked this many times after each run; every answer must come from the new active hub. */
const HEALTH_CHECKS = 10;

/** What one measured event needs besides the context. */
interface EventSetup {
  readonly kind: 'kill' | 'pause';
  readonly active: RunningHub;
  readonly standby: RunningHub;
  /** Starts the load. */
  readonly load: () => PostLoad;
  /** For `health` and reading logs. */
  readonly rpc: HubRpc;
}

/** When things happened in a run (`performance.now()`): the "before" window began, the signal, all loops flowing. */
interface RunTimes {
  readonly beforeFrom: number;
  readonly signalAt: number;
  readonly settledAt: number;
}

/**
 * Failover, measured from outside with the hubs at hub-service's defaults (6 s lease). Two host processes run a hub
 * on one prefix, the first active, the second a standby; closed loops post into conversation channels (one post in
 * flight each, through a `HubRpc` that retries as clients do), with a single-attempt probe post every 25 ms beside
 * them. After a warm-up the active host is
 *
 * - killed (SIGKILL): its NATS connection closes with it, and the standby takes over once it has seen the holder's
 *   presence gone for a second, without waiting for the lease; then a fresh standby is started for the next run;
 * - paused (SIGSTOP) for longer than the lease, then woken (SIGCONT): its connection stays open, so the standby waits
 *   for the lease to expire; the woken hub must step down (it becomes the next run's standby).
 *
 * Each run records the time from the signal to the first ack of a post sent after it, until every loop had such an
 * ack, the longest post→ack around the event, post→ack before and after, and posts that failed (the scenario throws if
 * any did). After each run every channel's log is read back: every acked post must be there once, gap-free.
 */
export async function failover(ctx: ScenarioContext): Promise<FailoverResult> {
  const s = ctx.sizes.failover;
  const prefix = ctx.prefix('fo');
  const names = hubNames(prefix);
  let hostCount = 0;
  const startHost = async (standby: boolean): Promise<RunningHub> =>
    startHubIn(ctx, await ctx.host(`hub-${hostCount++}`), { prefix, standby });
  let active = await startHost(false);
  const rpc = ctx.rpc(prefix);
  const channels = await openAll(ctx, rpc, s.channels + 1);
  const [probe, ...loaded] = channels.map(targetOf);
  if (probe === undefined) throw new Error('no probe channel');
  const load = failoverLoad(ctx, {
    prefix,
    targets: loaded,
    probes: [probe],
    paceMs: s.paceMs,
    probeEveryMs: PROBE_EVERY_MS,
  });
  const leaseTtlMs = await leaseTtlOf(ctx, names);

  let standby = await startHost(true);
  const acked: PostLoad['acked'] = [];
  const measureOnce = async (kind: EventSetup['kind'], r: number): Promise<MeasuredRun> => {
    ctx.log(`${kind} ${r + 1} of ${s.runs}: ${active.hubId} active, ${standby.hubId} standing by`);
    const measured = await measureEvent(ctx, { kind, active, standby, load, rpc });
    acked.push(...measured.acked);
    const read = await checkLogs(rpc, channels, acked);
    ctx.log(
      `${kind}: first ack after ${measured.run.first_ack_ms.toFixed(0)} ms, every loop after ` +
        `${measured.run.resumed_ms.toFixed(0)} ms; all ${acked.length} acked posts once in ${read} log entries`,
    );
    return measured;
  };

  const kills: FailoverRunResult[] = [];
  for (let r = 0; r < s.runs; r += 1) {
    kills.push((await measureOnce('kill', r)).run);
    active = standby;
    standby = await startHost(true);
  }
  const pauses: PauseRunResult[] = [];
  for (let r = 0; r < s.runs; r += 1) {
    const { run, steppedDownMs } = await measureOnce('pause', r);
    pauses.push({ ...run, stepped_down_ms: round(steppedDownMs, 1) });
    [active, standby] = [standby, active];
  }
  return {
    channels: s.channels,
    pace_ms: s.paceMs,
    lease_ttl_ms: leaseTtlMs,
    attempt_timeout_ms: ATTEMPT_TIMEOUT_MS,
    probe_every_ms: PROBE_EVERY_MS,
    pause_ms: s.pauseMs,
    acked_posts: acked.length,
    kill: eventOf(kills),
    pause: { ...eventOf(pauses), stepped_down_ms: spreadOf(pauses, (r) => r.stepped_down_ms), runs: pauses },
  };
}

/** Registers two agents per conversation and opens `count` conversations, until the invites are all delivered. */
async function openAll(ctx: ScenarioContext, rpc: HubRpc, count: number): Promise<LoggedChannel[]> {
  ctx.log(`registering ${2 * count} agents and opening ${count} conversations (one for the probe)`);
  const channelIds = Array.from({ length: count }, () => newId());
  const pair = (agents: readonly string[], i: number): { creator: string; invitee: string } => ({
    creator: agents[2 * i] ?? '',
    invitee: agents[2 * i + 1] ?? '',
  });
  const channels = await openConversations(ctx, rpc, { label: 'fo', agents: 2 * count, channelIds, pair });
  await waitForDelivery(ctx.jsm, rpc.names);
  return channels;
}

/** One run's figures, its acked posts, and how long the woken hub took to step down (pauses; 0 for kills). */
interface MeasuredRun {
  readonly run: FailoverRunResult;
  readonly acked: PostLoad['acked'];
  readonly steppedDownMs: number;
}

/** One kill or pause under load, checked: the standby serves afterwards, the old hub does not, no post failed. */
async function measureEvent(ctx: ScenarioContext, setup: EventSetup): Promise<MeasuredRun> {
  const s = ctx.sizes.failover;
  const { kind, active, standby } = setup;
  const before = await active.host.call('hubState', {});
  if (before.role !== 'active') throw new Error(`${active.hubId} is not the active hub`);
  const load = setup.load();
  let signalAt = Number.NaN;
  let steppedDownMs = 0;
  let activeMs = Number.NaN;
  let settledAt = Number.NaN;
  try {
    await sleep(s.warmupMs + s.beforeMs);
    signalAt = performance.now();
    active.host.signal(kind === 'kill' ? 'SIGKILL' : 'SIGSTOP');
    const takeover = untilRole(standby.host, 'active');
    // Awaited below; this only keeps a failure while the pause runs from going unhandled meanwhile.
    takeover.catch(() => undefined);
    if (kind === 'pause') {
      await sleep(s.pauseMs);
      active.host.signal('SIGCONT');
      steppedDownMs = await untilRole(active.host, 'standby');
    }
    activeMs = await takeover;
    await load.everyLoopAckedSince(signalAt, RECOVERY_TIMEOUT_MS);
    settledAt = performance.now();
    await sleep(s.afterMs);
  } finally {
    await load.stop();
  }
  if (load.failed.length > 0) {
    const [first] = load.failed;
    throw new Error(`${load.failed.length} posts failed across the ${kind}`, { cause: first?.error });
  }
  for (let i = 0; i < HEALTH_CHECKS; i += 1) {
    const health = await setup.rpc.call('health', {});
    if (health.hub_id !== standby.hubId || health.role !== 'active' || health.epoch <= before.epoch) {
      throw new Error(
        `after the ${kind} of ${active.hubId} (epoch ${before.epoch}) health came from ${health.hub_id} ` +
          `(${health.role}, epoch ${health.epoch}), not from ${standby.hubId} with a later epoch`,
      );
    }
  }
  const times = { beforeFrom: signalAt - s.beforeMs, signalAt, settledAt };
  return { run: { standby_active_ms: round(activeMs, 1), ...runOf(load, times) }, acked: load.acked, steppedDownMs };
}

/** Polls a host every 10 ms until its hub has `role`; ms from the call. */
async function untilRole(host: HostProcess, role: 'active' | 'standby'): Promise<number> {
  const started = performance.now();
  for (;;) {
    const state = await host.call('hubState', {}, RECOVERY_TIMEOUT_MS);
    if (state.role === role) return performance.now() - started;
    if (performance.now() - started > RECOVERY_TIMEOUT_MS) throw new Error(`${host.name} is not ${role}`);
    await sleep(10);
  }
}

/** The figures of one run, from what its load recorded. */
function runOf(load: PostLoad, at: RunTimes): Omit<FailoverRunResult, 'standby_active_ms'> {
  const posts = load.acked.filter((p) => p.loop >= 0);
  const sentAfter = load.acked.filter((p) => p.sentAt >= at.signalAt);
  const firstAck = Math.min(...sentAfter.map((p) => p.ackedAt));
  const resumedAt = new Map<number, number>();
  for (const p of sentAfter) {
    if (p.loop >= 0) resumedAt.set(p.loop, Math.min(resumedAt.get(p.loop) ?? Infinity, p.ackedAt));
  }
  const across = posts.filter((p) => p.ackedAt >= at.signalAt && p.sentAt < at.settledAt);
  const latency = (p: { readonly sentAt: number; readonly ackedAt: number }): number => p.ackedAt - p.sentAt;
  return {
    first_ack_ms: round(firstAck - at.signalAt, 1),
    resumed_ms: round(Math.max(...resumedAt.values()) - at.signalAt, 1),
    max_latency_ms: round(Math.max(...across.map(latency)), 1),
    acked: load.acked.length,
    failed: load.failed.length,
    before: summarize(posts.filter((p) => p.ackedAt < at.signalAt && p.sentAt >= at.beforeFrom).map(latency)),
    after: summarize(posts.filter((p) => p.sentAt >= at.settledAt).map(latency)),
  };
}

/** Several runs of one kind of event: each run, and min / median / max of its figures. */
function eventOf(runs: readonly FailoverRunResult[]): FailoverEventResult {
  return {
    standby_active_ms: spreadOf(runs, (r) => r.standby_active_ms),
    first_ack_ms: spreadOf(runs, (r) => r.first_ack_ms),
    resumed_ms: spreadOf(runs, (r) => r.resumed_ms),
    max_latency_ms: spreadOf(runs, (r) => r.max_latency_ms),
    failed_posts: runs.reduce((a, r) => a + r.failed, 0),
    runs: [...runs],
  };
}
