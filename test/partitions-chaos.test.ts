import { HubRpc } from '@ag2net/client';
import { startHub } from '@ag2net/hub';
import { EV_TEXT, hubNames, partitionOf, type Health } from '@ag2net/protocol';
import { uniqueName, waitFor } from '@ag2net/test-support';
import { Kvm } from '@nats-io/kv';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  byChannel,
  deliveryCaughtUp,
  drainInbox,
  openChannels,
  probeEveryChannel,
  readWholeWal,
  runLoad,
  walDefects,
  type PostAttempt,
} from './support/chaos-load.js';
import { fileStack } from './support/file-stack.js';
import { channelIdsPerPartition, leaseHolders, rosterOf } from './support/partitions.js';
import { jsonLogLines, startService, type ServiceProcess } from './support/processes.js';

/**
 * Hub processes sharing one prefix whose channels are spread over 8 partitions, under a steady post load on two
 * channels of every partition, while one hub is killed (SIGKILL), another frozen past its lease and let go
 * (SIGSTOP/SIGCONT), a fourth one joins and one stops gracefully (SIGTERM). After each fault every partition is served
 * by a live hub again within seconds; partitions move to their preferred owners (rendezvous over the live hubs);
 * afterwards the log is the single truth (every acked post once, per-channel sequences 1..n), every participant got
 * every post of its peer, no channel is stuck and the hubs' live state, joined over the partitions each serves, equals
 * the fold of the log. A post attempt may fail only on a partition that was moving at that moment: held by the hub a
 * fault hit, or being handed over, until its new owner serves it.
 */

const LEASE_TTL_MS = 2000;
const PARTITIONS = 8;
const CHANNELS_PER_PARTITION = 2;
const CLIENTS = 3;
/** One attempt of a post; the load resends a failed attempt itself (so that each failure is seen) for 30 s. */
const ATTEMPT_TIMEOUT_MS = 1000;
/** Each channel posts every 100 ms: a steady load of up to 160 posts a second, not a flood of a 2-core machine. */
const GAP_MS = 100;
/** How soon after a fault every partition must be served by a live hub again. */
const TAKEOVER_LIMIT_MS = 5000;
/** The pause: more than twice the lease, so that the frozen hub's leases lapse and are taken. */
const PAUSE_MS = 2 * LEASE_TTL_MS + 500;
/** How long the partitions must stay put to count as settled, ms. */
const STABLE_MS = 2500;
/** Clock and logging leeway when matching a failed attempt with the interval its partition was moving. */
const SLACK_MS = 500;

const stack = fileStack();
const clientConnections = stack.clients(CLIENTS);

/** A hub process with `PARTITIONS` partitions that answers `<prefix>.test.<hubId>.snapshot` (support/snapshot-hub.ts). */
function startPartitionedHub(prefix: string, hubId: string): ServiceProcess {
  return stack.track(
    startService(`hub-${hubId}`, 'test/support/snapshot-hub.ts', [
      stack.url,
      prefix,
      hubId,
      String(LEASE_TTL_MS),
      String(PARTITIONS),
    ]),
  );
}

/** Every hub that answers the roster within 400 ms, by id. */
async function roster(prefix: string): Promise<Map<string, Health>> {
  return rosterOf(stack.nc, hubNames(prefix, PARTITIONS));
}

function heldBy(health: Health | undefined): number[] {
  return (health?.held ?? []).map((h) => h.partition).sort((a, b) => a - b);
}

/** Partitions of `holders` whose key names `hubId`. */
function partitionsOf(holders: readonly (string | null)[], hubId: string): number[] {
  return holders.flatMap((h, k) => (h === hubId ? [k] : []));
}

/** The hub among `hubIds` whose lease keys name it most often (ties: the first). */
function busiest(holders: readonly (string | null)[], hubIds: readonly string[]): string {
  const counts = hubIds.map((id) => partitionsOf(holders, id).length);
  return hubIds[counts.indexOf(Math.max(...counts))] ?? '';
}

/** A log line of a hub process that says something about a partition's term. */
const LogLineSchema = z.looseObject({
  time: z.number(),
  msg: z.string(),
  hubId: z.string().optional(),
  partition: z.number().optional(),
});
type LogLine = z.infer<typeof LogLineSchema>;

function logLines(service: ServiceProcess): LogLine[] {
  return jsonLogLines(service, LogLineSchema);
}

/** What support/snapshot-hub.ts answers with partitions: the role, the `HubSnapshot` and the partitions served. */
const LiveStateSchema = z.strictObject({
  role: z.string(),
  epoch: z.number(),
  snapshot: z.strictObject({
    agents: z.array(z.unknown()),
    channels: z.array(z.looseObject({ metadata: z.looseObject({ channel_id: z.string() }) })),
    inbox_pending: z.array(z.tuple([z.string(), z.number()])),
    tasks: z.array(z.unknown()),
  }),
  held: z.array(z.strictObject({ partition: z.number(), epoch: z.number() })),
});
type LiveState = z.infer<typeof LiveStateSchema>;
type Snapshot = LiveState['snapshot'];

async function liveState(prefix: string, hubId: string): Promise<LiveState> {
  const reply = await stack.nc.request(`${prefix}.test.${hubId}.snapshot`, '', { timeout: 10_000 });
  return LiveStateSchema.parse(JSON.parse(reply.string()));
}

/** Snapshots of hubs serving disjoint partitions as one: channels by id, inbox counts summed, lists in a fixed order. */
function joined(snapshots: readonly Snapshot[]): Snapshot {
  const byJson = (a: unknown, b: unknown): number => JSON.stringify(a).localeCompare(JSON.stringify(b));
  const pending = new Map<string, number>();
  for (const s of snapshots) for (const [id, n] of s.inbox_pending) pending.set(id, (pending.get(id) ?? 0) + n);
  return {
    agents: [...(snapshots[0]?.agents ?? [])].sort(byJson),
    channels: snapshots
      .flatMap((s) => s.channels)
      .sort((a, b) => a.metadata.channel_id.localeCompare(b.metadata.channel_id)),
    inbox_pending: [...pending.entries()].sort(([a], [b]) => a.localeCompare(b)),
    tasks: [...(snapshots[0]?.tasks ?? [])].sort(byJson),
  };
}

/** A fault and the partitions its victim held (lease keys read just before). */
interface Fault {
  readonly kind: 'SIGKILL' | 'SIGSTOP' | 'SIGTERM';
  readonly victim: string;
  readonly at: number;
  readonly held: readonly number[];
  /** How long until every partition was served by a live hub again, ms. */
  takeoverMs: number;
}

/** An interval a partition was moving: from a fault or a hand-over to the first time its new owner served it. */
interface Moving {
  readonly partition: number;
  readonly from: number;
  readonly to: number;
  readonly why: string;
}

/** The intervals each partition was moving, from the faults and the hubs' own logs (`active`, hand-overs). */
function movingIntervals(faults: readonly Fault[], hubs: ReadonlyMap<string, ServiceProcess>): Moving[] {
  // A partition's view logs without a partition field for partition 0.
  const lines = [...hubs.entries()].flatMap(([hubId, service]) =>
    logLines(service).map((l) => ({ ...l, hubId, partition: l.partition ?? 0 })),
  );
  const servedAfter = (k: number, t: number, notBy: string): number =>
    Math.min(
      ...lines
        .filter((l) => l.msg === 'active' && l.partition === k && l.time >= t && l.hubId !== notBy)
        .map((l) => l.time),
    );
  const out: Moving[] = [];
  for (const f of faults) {
    for (const k of f.held)
      out.push({ partition: k, from: f.at, to: servedAfter(k, f.at, f.victim), why: `${f.kind} ${f.victim}` });
  }
  for (const l of lines) {
    if (l.msg !== 'handing the partition over to its preferred owner') continue;
    out.push({
      partition: l.partition,
      from: l.time,
      to: servedAfter(l.partition, l.time, l.hubId),
      why: `hand-over by ${l.hubId}`,
    });
  }
  return out;
}

describe('chaos: partitioned hubs (P = 8, lease 2 s) killed, paused, joined and stopped under load', () => {
  it('every partition is served again within seconds, posts fail only on moving partitions, the log and the state stay sound', async () => {
    const t0 = Date.now();
    const prefix = uniqueName('parts');
    const names = hubNames(prefix, PARTITIONS);
    const admin = new HubRpc(stack.nc, { prefix, retryForMs: 30_000 });
    const hubs = new Map<string, ServiceProcess>();
    const live: string[] = [];
    const start = (hubId: string): void => {
      hubs.set(hubId, startPartitionedHub(prefix, hubId));
      live.push(hubId);
      live.sort();
    };
    const leave = (hubId: string): void => {
      live.splice(live.indexOf(hubId), 1);
    };
    const rejoin = (hubId: string): void => {
      live.push(hubId);
      live.sort();
    };
    const hub = (hubId: string): ServiceProcess => {
      const service = hubs.get(hubId);
      if (service === undefined) throw new Error(`no hub ${hubId}`);
      return service;
    };
    const shares: string[] = [];
    /**
     * Waits until the partitions are settled over the live hubs: every lease key names a live hub, each live hub
     * serves exactly the partitions whose keys name it, each holds its fair share (`floor(P/n)` or `ceil(P/n)`), and
     * nothing moved for `STABLE_MS` (longer than the gap between two hand-overs of a rebalancing).
     */
    const settled = async (what: string, timeoutMs: number): Promise<Map<string, number[]>> => {
      let seen = '';
      let since = { state: '', at: 0 };
      try {
        return await waitFor(
          async () => {
            const holders = await leaseHolders(kv, hubNames(prefix, PARTITIONS));
            const hubsNow = await roster(prefix);
            const servedBy = new Map(live.map((id) => [id, heldBy(hubsNow.get(id))]));
            seen = `leases ${JSON.stringify(holders)}, serving ${JSON.stringify([...servedBy])}`;
            if (seen !== since.state) since = { state: seen, at: Date.now() };
            const fair = [Math.floor(PARTITIONS / live.length), Math.ceil(PARTITIONS / live.length)];
            const ok =
              holders.every((h) => h !== null && live.includes(h)) &&
              live.every((id) => JSON.stringify(servedBy.get(id)) === JSON.stringify(partitionsOf(holders, id))) &&
              live.every((id) => fair.includes(partitionsOf(holders, id).length)) &&
              Date.now() - since.at >= STABLE_MS;
            return ok ? servedBy : undefined;
          },
          { timeoutMs, intervalMs: 200, what },
        );
      } catch (err) {
        throw new Error(`${what}: last seen ${seen}`, { cause: err });
      } finally {
        shares.push(`${((Date.now() - t0) / 1000).toFixed(1)} s ${what}: ${seen}`);
      }
    };
    /** Waits until the live hubs (`live`, the victim taken out) serve every partition; returns how long it took. */
    const served = async (fault: Fault): Promise<void> => {
      let seen = '';
      await waitFor(
        async () => {
          const holders = await leaseHolders(kv, hubNames(prefix, PARTITIONS));
          const hubsNow = await roster(prefix);
          const covered = new Set(live.flatMap((id) => heldBy(hubsNow.get(id))));
          seen = `leases ${JSON.stringify(holders)}, served ${JSON.stringify([...covered].sort())}`;
          return holders.every((h) => h !== null && live.includes(h)) && covered.size === PARTITIONS;
        },
        { timeoutMs: 20_000, intervalMs: 100, what: `every partition served after ${fault.kind} ${fault.victim}` },
      ).catch((err: unknown) => {
        throw new Error(`after ${fault.kind} ${fault.victim}: last seen ${seen}`, { cause: err });
      });
      fault.takeoverMs = Date.now() - fault.at;
    };
    const faults: Fault[] = [];
    const fault = async (kind: Fault['kind'], victim: string): Promise<Fault> => {
      const f: Fault = {
        kind,
        victim,
        at: Date.now(),
        held: partitionsOf(await leaseHolders(kv, hubNames(prefix, PARTITIONS)), victim),
        takeoverMs: -1,
      };
      faults.push(f);
      return f;
    };

    // Three hubs; two channels on every partition.
    for (const id of ['hub-1', 'hub-2', 'hub-3']) start(id);
    // The hubs provision the leases bucket (with the lease time as its TTL): opened once it exists.
    const kv = await waitFor(
      async () => {
        const bucket = await new Kvm(stack.nc).open(names.leasesBucket);
        await bucket.status();
        return bucket;
      },
      {
        timeoutMs: 30_000,
        intervalMs: 200,
        what: 'the leases bucket',
      },
    );
    const initial = await settled('three hubs settled', 40_000);
    expect
      .soft(
        [...initial.values()].map((held) => held.length > 0),
        'each of three hubs owns a share',
      )
      .toEqual([true, true, true]);
    const ids = channelIdsPerPartition((id) => partitionOf(id, PARTITIONS), PARTITIONS, CHANNELS_PER_PARTITION);
    const channels = await openChannels(stack.nc, admin, ids);
    const partitionOfChannel = new Map(channels.map((c) => [c.channel, partitionOf(c.channel, PARTITIONS)]));

    const failed: (PostAttempt & { partition: number })[] = [];
    const attempts = new Map<number, number>();
    const stopLoad = new AbortController();
    const clients = clientConnections.map((nc) => new HubRpc(nc, { prefix, retryForMs: 30_000 }));
    const load = runLoad({
      clients,
      channels,
      postsPerChannel: 100_000,
      attemptTimeoutMs: ATTEMPT_TIMEOUT_MS,
      signal: stopLoad.signal,
      gapMs: GAP_MS,
      resendForMs: 30_000,
      onAttempt: (a) => {
        const partition = partitionOfChannel.get(a.channel) ?? -1;
        attempts.set(partition, (attempts.get(partition) ?? 0) + 1);
        if (a.error !== null) failed.push({ ...a, partition });
      },
    });
    await load.ackedAtLeast(200);
    const loadFrom = Date.now();

    // 1. SIGKILL the hub holding the most partitions; the survivors take them.
    const killed = busiest(await leaseHolders(kv, hubNames(prefix, PARTITIONS)), live);
    const kill = await fault('SIGKILL', killed);
    leave(killed);
    await hub(killed).stop('SIGKILL');
    await served(kill);
    await settled(`after SIGKILL ${killed}`, 20_000);

    // 2. SIGSTOP the survivor holding the most partitions past its lease; SIGCONT; it steps down, then gets its share back.
    const paused = busiest(await leaseHolders(kv, hubNames(prefix, PARTITIONS)), live);
    const pause = await fault('SIGSTOP', paused);
    leave(paused);
    hub(paused).pause();
    await served(pause);
    await sleep(Math.max(0, pause.at + PAUSE_MS - Date.now())); // the fault's length, not a wait for a condition
    hub(paused).resume();
    const resumedAt = Date.now();
    await waitFor(
      async () => {
        const holders = await leaseHolders(kv, hubNames(prefix, PARTITIONS));
        const own = (await roster(prefix)).get(paused);
        return own !== undefined && heldBy(own).every((k) => holders[k] === paused);
      },
      { timeoutMs: 10_000, intervalMs: 100, what: `${paused} to step down from the partitions it lost` },
    );
    const steppedDownMs = Date.now() - resumedAt;
    rejoin(paused);
    const afterPause = await settled(`${paused} back`, 30_000);
    expect(afterPause.get(paused)?.length ?? 0, `${paused} gets a share back`).toBeGreaterThan(0);

    // 3. A fourth hub joins and takes its share.
    start('hub-4');
    const withFourth = await settled('hub-4 joined', 40_000);
    expect(withFourth.get('hub-4')?.length ?? 0, 'hub-4 takes a share').toBeGreaterThan(0);

    // 4. SIGTERM the hub holding the most partitions: a graceful stop hands them over.
    const stopped = busiest(await leaseHolders(kv, hubNames(prefix, PARTITIONS)), live);
    const stop = await fault('SIGTERM', stopped);
    leave(stopped);
    expect(await hub(stopped).stop('SIGTERM')).toBe(0);
    await served(stop);
    await settled(`after SIGTERM ${stopped}`, 20_000);
    await load.ackedAtLeast(load.acked.size + 100);
    stopLoad.abort();
    await load.done;
    const loadMs = Date.now() - loadFrom;

    // Failures hit only partitions that were moving at that moment.
    const moving = movingIntervals(faults, hubs);
    const unexplained = failed.filter(
      (a) =>
        !moving.some(
          (m) => m.partition === a.partition && a.startedAt <= m.to + SLACK_MS && a.endedAt >= m.from - SLACK_MS,
        ),
    );
    const at = (t: number): string => `${((t - t0) / 1000).toFixed(2)} s`;
    const failuresByPartition = new Map<number, number>();
    for (const a of failed) failuresByPartition.set(a.partition, (failuresByPartition.get(a.partition) ?? 0) + 1);
    // What the failed attempts met: the cause the client gave up on (no responder, a timeout, an answer).
    const kinds = new Map<string, number>();
    for (const a of failed) {
      const kind = /\((\w+)/.exec(a.error ?? '')?.[1] ?? (a.error ?? '').slice(0, 40);
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
    process.stdout.write(
      [
        `load ${(loadMs / 1000).toFixed(1)} s: ${load.acked.size} posts acked, ${[...attempts.values()].reduce((a, b) => a + b, 0)} attempts, ${failed.length} failed attempts, final errors ${load.errors.length}`,
        `failed attempts by partition: ${JSON.stringify([...failuresByPartition].sort(([a], [b]) => a - b))}`,
        `failed attempts by cause: ${JSON.stringify([...kinds])}`,
        ...faults.map(
          (f) =>
            `${f.kind} ${f.victim} at ${at(f.at)} held ${JSON.stringify(f.held)}: every partition served again after ${f.takeoverMs} ms`,
        ),
        `${paused} stepped down ${steppedDownMs} ms after SIGCONT`,
        ...shares,
        ...moving.map((m) => `moving p${m.partition} ${at(m.from)}..${at(m.to)} (${m.why})`),
        ...unexplained
          .slice(0, 20)
          .map(
            (a) => `UNEXPLAINED p${a.partition} ${at(a.startedAt)}..${at(a.endedAt)} ${a.channel}: ${a.error ?? ''}`,
          ),
        '',
      ].join('\n'),
    );
    // Every move ended with a new owner serving (an open interval would excuse every later failure of its partition).
    expect(moving.filter((m) => !Number.isFinite(m.to)).map((m) => `p${m.partition} (${m.why})`)).toEqual([]);
    expect(unexplained.map((a) => `p${a.partition} at ${at(a.startedAt)}: ${a.error ?? ''}`)).toEqual([]);
    expect(load.errors).toEqual([]);
    for (const f of faults)
      expect(f.takeoverMs, `${f.kind} ${f.victim}: every partition served again`).toBeLessThan(TAKEOVER_LIMIT_MS);

    // The log: every acked post once where it was acked, every channel's sequences 1..n.
    await deliveryCaughtUp(stack.nc, names, 30_000);
    const wal = await readWholeWal(stack.nc, prefix);
    expect(walDefects(wal, load.acked)).toEqual([]);
    // Every participant got every post of its peer.
    const logged = byChannel(wal);
    for (const { channel, a, b } of channels) {
      const texts = (logged.get(channel) ?? []).filter((e) => e.event_type === EV_TEXT);
      for (const [me, peer] of [
        [a, b],
        [b, a],
      ] as const) {
        const got = (await drainInbox(stack.nc, prefix, me)).filter(
          (e) => e.event_type === EV_TEXT && e.channel_id === channel,
        );
        const expected = texts.filter((e) => e.sender_id === peer).map((e) => e.envelope_id);
        expect(new Set(got.map((e) => e.envelope_id)), `${me}'s inbox in ${channel}`).toEqual(new Set(expected));
      }
    }
    // No channel is stuck, and each hub's next sequence is the log's.
    const probes = await probeEveryChannel(stack.nc, admin, channels);
    expect(probes.filter((p) => p.acked !== p.expected)).toEqual([]);
    expect(walDefects(await readWholeWal(stack.nc, prefix), load.acked)).toEqual([]);

    // Live state equals the fold: the hubs' states joined over the partitions each serves, against a cold hub's.
    await deliveryCaughtUp(stack.nc, names, 30_000);
    const states = await Promise.all(live.map((id) => liveState(prefix, id)));
    const servedNow = states.flatMap((s) => s.held.map((h) => h.partition)).sort((x, y) => x - y);
    expect(servedNow).toEqual(Array.from({ length: PARTITIONS }, (_, k) => k));
    for (const s of states.slice(1)) {
      expect(joined([s.snapshot]).agents).toEqual(joined([states[0]?.snapshot ?? s.snapshot]).agents);
      expect(joined([s.snapshot]).tasks).toEqual(joined([states[0]?.snapshot ?? s.snapshot]).tasks);
    }
    const liveJoined = joined(states.map((s) => s.snapshot));
    for (const id of [...live]) expect(await hub(id).stop('SIGTERM'), `${id} stops`).toBe(0);
    const cold = await startHub({
      connection: stack.nc,
      prefix,
      hubId: 'cold',
      leaseTtlMs: LEASE_TTL_MS,
      partitions: PARTITIONS,
    });
    try {
      expect(joined([LiveStateSchema.shape.snapshot.parse(JSON.parse(JSON.stringify(cold.snapshot())))])).toEqual(
        liveJoined,
      );
    } finally {
      await cold.close();
    }
  }, 150_000);
});
