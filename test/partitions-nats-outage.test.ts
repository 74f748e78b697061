import { HubRpc } from '@ag2net/client';
import {
  Ag2netError,
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_INVITE_REJECT,
  hubNames,
  newId,
  partitionOf,
} from '@ag2net/protocol';
import { uniqueName, waitFor } from '@ag2net/test-support';
import { Kvm } from '@nats-io/kv';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  acceptInvite,
  byChannel,
  deliveryCaughtUp,
  drainInbox,
  openChannels,
  probeEveryChannel,
  readWholeWal,
  runLoad,
  walDefects,
  type Acceptance,
  type AckedPost,
  type ChaosChannel,
  type LoadRun,
  type PostAttempt,
} from './support/chaos-load.js';
import { fileStack } from './support/file-stack.js';
import { channelIdsPerPartition, leaseHolders, rosterOf } from './support/partitions.js';
import { logLines, startHubService, type ServiceProcess } from './support/processes.js';

/**
 * Two hub-service processes sharing one prefix of 8 partitions, at the default lease (6 s), under a steady post load
 * on two channels of every partition while new conversations are opened all the while (client-minted ids, each posted
 * in once open), when nats-server fails: killed (SIGKILL) and started again 3 s later on the same store, then frozen
 * (SIGSTOP) for 10 s. Afterwards: every broadcast in the log reached each of its recipients' inboxes exactly once, every
 * acked post is in the log once with gap-free sequences, no channel is stuck, a creation failed only with a retryable
 * error (and sent again later opens the same channel), every creation that succeeded is open and takes posts, and every
 * partition is held by a live hub. Whether the outages moved partitions (new lease terms) is reported, not asserted.
 */

const LEASE_TTL_MS = 6000;
const PARTITIONS = 8;
const HUBS = ['first', 'second'] as const;
const CHANNELS_PER_PARTITION = 2;
const CLIENTS = 3;
/** Each load channel posts every 100 ms; each attempt waits 1 s and a failed one is resent for 30 s. */
const GAP_MS = 100;
const ATTEMPT_TIMEOUT_MS = 1000;
const RESEND_FOR_MS = 30_000;
/** A new conversation is opened every 400 ms, each from a fresh pair of agents (registered beforehand). */
const CREATE_EVERY_MS = 400;
const CREATION_POOL = 90;
/** A creation's attempts wait 3 s and are resent for 5 s: shorter than the stall, so that some of them fail. */
const CREATE_ATTEMPT_MS = 3000;
const CREATE_RETRY_MS = 5000;
/** Posts in each opened conversation, one every 200 ms. */
const CREATED_POSTS = 5;
const RESTART_DOWN_MS = 3000;
const STALL_MS = 10_000;
/** How long the partitions must stay put to count as settled, ms. */
const STABLE_MS = 2000;
/** Errors a creation may fail with: the hub could not be reached or asked to come back; nothing final. */
const RETRYABLE_CODES = ['unavailable', 'timeout'];

const stack = fileStack();
const clientConnections = stack.clients(CLIENTS, { reconnectForever: true });

const describeError = (err: unknown): string => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));

/** Every partition served now, as `<hub>@<epoch>` each hub that answers the roster within 400 ms says it holds. */
async function servedPartitions(prefix: string): Promise<string[][]> {
  const out: string[][] = Array.from({ length: PARTITIONS }, () => []);
  for (const health of (await rosterOf(stack.nc, hubNames(prefix, PARTITIONS))).values()) {
    for (const { partition, epoch } of health.held) out[partition]?.push(`${health.hub_id}@${epoch}`);
  }
  return out.map((list) => list.sort());
}

/** How often each hub logged `msg` about each partition since `since`, as `<hub> p<k>: n`. */
function logCounts(hubs: readonly ServiceProcess[], msg: string, since: number): string[] {
  const counts = new Map<string, number>();
  for (const line of hubs.flatMap((hub) => logLines(hub).map((l) => ({ ...l, hub: hub.name })))) {
    if (line.msg !== msg || line.time < since) continue;
    const key = `${line.hub} p${line.partition}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([key, n]) => `${key}: ${n}`);
}

/** When each partition was served again after `since`, as `p<k> +<s> (<hub>, <how>)`: a new term or a renewed lease. */
function servedAgain(hubs: readonly ServiceProcess[], since: number): string[] {
  const how = new Map([
    ['active', 'new term'],
    ['lease renewed after a lapse; serving again', 'renewed'],
  ]);
  return Array.from({ length: PARTITIONS }, (_, k) => {
    const first = hubs
      .flatMap((hub) => logLines(hub).map((l) => ({ ...l, hub: hub.name })))
      .filter((l) => l.partition === k && l.time >= since && how.has(l.msg))
      .sort((x, y) => x.time - y.time)[0];
    if (first === undefined) return `p${k} not served again (kept, or never lapsed)`;
    return `p${k} +${((first.time - since) / 1000).toFixed(1)} s (${first.hub}, ${how.get(first.msg) ?? ''})`;
  });
}

/** One creation of the creation loop and what became of it. */
interface Creation extends ChaosChannel {
  readonly startedAt: number;
  endedAt: number;
  /** `null` once the creation answered the open channel; else its error as `<code> <Name>: <message> (<cause>)`. */
  error: string | null;
  /** Whether the error is one that allows sending the same creation again. */
  retryable: boolean;
  /** How its invitee accepted it. */
  accepted: Promise<Acceptance>;
  /** The posts in the channel, once it is open. */
  posts: LoadRun | null;
  /** Settles once the creation ended and its posts, if any, were sent. */
  done: Promise<void>;
}

describe('chaos: partitioned hubs (P = 8, lease 6 s) while nats-server is killed and frozen', () => {
  it('a restart and a 10 s stall under posts and creations: deliveries once, the log sound, creations retryable, every partition held', async () => {
    const t0 = Date.now();
    const at = (t: number): string => `${((t - t0) / 1000).toFixed(1)} s`;
    const prefix = uniqueName('outage');
    const names = hubNames(prefix, PARTITIONS);
    const admin = new HubRpc(stack.nc, { prefix, retryForMs: 40_000 });
    const hubs = HUBS.map((hubId) =>
      stack.track(
        startHubService({
          natsUrl: stack.url,
          prefix,
          hubId,
          leaseTtlMs: LEASE_TTL_MS,
          extraArgs: ['--partitions', String(PARTITIONS)],
        }),
      ),
    );
    const kv = await waitFor(
      async () => {
        const bucket = await new Kvm(stack.nc).open(names.leasesBucket);
        await bucket.status();
        return bucket;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: 'the leases bucket' },
    );
    /**
     * Waits until every partition is held by a live hub and served by it alone (the roster says so, with the epoch its
     * lease key has), each hub holds a share, and nothing moved for `STABLE_MS`; returns `<hub>@<epoch>` by partition.
     */
    const settled = async (what: string, timeoutMs: number): Promise<string[]> => {
      let seen = '';
      let since = { state: '', at: 0 };
      try {
        return await waitFor(
          async () => {
            const holders = await leaseHolders(kv, hubNames(prefix, PARTITIONS));
            const served = await servedPartitions(prefix);
            seen = `leases ${JSON.stringify(holders)}, served ${JSON.stringify(served)}`;
            if (seen !== since.state) since = { state: seen, at: Date.now() };
            const owners = served.map((list) => (list.length === 1 ? (list[0] ?? '') : ''));
            const ok =
              owners.every((o, k) => o.split('@')[0] === holders[k] && HUBS.some((h) => h === holders[k])) &&
              HUBS.every((h) => holders.includes(h)) &&
              Date.now() - since.at >= STABLE_MS;
            return ok ? owners : undefined;
          },
          { timeoutMs, intervalMs: 200, what },
        );
      } catch (err) {
        throw new Error(`${what}: last seen ${seen}`, { cause: err });
      }
    };
    const initial = await settled('two hubs sharing the partitions', 60_000);
    const settledAt = Date.now();

    // Two load channels on every partition, and a pool of agent pairs for the creations.
    const ids = channelIdsPerPartition((id) => partitionOf(id, PARTITIONS), PARTITIONS, CHANNELS_PER_PARTITION);
    const channels = await openChannels(stack.nc, admin, ids);
    const pool: { a: string; b: string }[] = [];
    for (let i = 0; i < CREATION_POOL; i += 10) {
      const batch = Array.from({ length: Math.min(10, CREATION_POOL - i) }, async (_, j) => {
        const reg = async (name: string): Promise<string> =>
          (await admin.call('register', { passport: { name } })).passport.agent_id ?? '';
        return { a: await reg(`creator${i + j}`), b: await reg(`invitee${i + j}`) };
      });
      pool.push(...(await Promise.all(batch)));
    }

    const failedPosts: (PostAttempt & { partition: number })[] = [];
    const onAttempt = (a: PostAttempt): void => {
      if (a.error !== null) failedPosts.push({ ...a, partition: partitionOf(a.channel, PARTITIONS) });
    };
    const clients = clientConnections.map((nc) => new HubRpc(nc, { prefix, retryForMs: 40_000 }));
    const stopLoad = new AbortController();
    const load = runLoad({
      clients,
      channels,
      postsPerChannel: 100_000,
      attemptTimeoutMs: ATTEMPT_TIMEOUT_MS,
      signal: stopLoad.signal,
      gapMs: GAP_MS,
      resendForMs: RESEND_FOR_MS,
      onAttempt,
    });

    // The creation loop: a new conversation every CREATE_EVERY_MS, each accepted by its invitee and posted in once open.
    const creations: Creation[] = [];
    const create = (pair: { a: string; b: string }, i: number): Creation => {
      const rpc = clients[i % clients.length] ?? admin;
      const nc = clientConnections[i % clientConnections.length] ?? stack.nc;
      const c: Creation = {
        channel: newId(),
        ...pair,
        startedAt: Date.now(),
        endedAt: 0,
        error: null,
        retryable: true,
        accepted: Promise.resolve({ readAt: 0, ackedAt: 0, error: null }),
        posts: null,
        done: Promise.resolve(),
      };
      c.accepted = acceptInvite(nc, rpc, c.b, c.startedAt + 45_000);
      c.done = (async () => {
        try {
          await rpc.call(
            'createChannel',
            { type: 'conversation', participants: [c.b], channel_id: c.channel },
            { caller: c.a, timeout: CREATE_ATTEMPT_MS, retryForMs: CREATE_RETRY_MS },
          );
        } catch (err) {
          const cause = err instanceof Error && err.cause !== undefined ? ` (${describeError(err.cause)})` : '';
          const code = err instanceof Ag2netError ? err.code : 'none';
          c.error = `${code} ${describeError(err)}${cause}`;
          c.retryable = err instanceof Ag2netError && err.retryable && RETRYABLE_CODES.includes(err.code);
          return;
        } finally {
          c.endedAt = Date.now();
        }
        c.posts = runLoad({
          clients: [rpc],
          channels: [c],
          postsPerChannel: CREATED_POSTS,
          attemptTimeoutMs: ATTEMPT_TIMEOUT_MS,
          gapMs: 200,
          resendForMs: RESEND_FOR_MS,
          onAttempt,
        });
        await c.posts.done;
      })();
      return c;
    };
    const stopCreating = new AbortController();
    const creating = (async () => {
      for (const [i, pair] of pool.entries()) {
        if (stopCreating.signal.aborted) return;
        creations.push(create(pair, i));
        await sleep(CREATE_EVERY_MS);
      }
    })();
    await load.ackedAtLeast(150);

    /**
     * Waits (up to 40 s) until every partition is served by exactly one hub again; returns how long that took (`-1`:
     * not within 40 s, left to the checks below) and who serves each partition then (`<hub>@<epoch>`).
     */
    const recovered = async (): Promise<{ ms: number; served: string[] }> => {
      const from = Date.now();
      let served: string[][] = [];
      const ok = await waitFor(
        async () => {
          served = await servedPartitions(prefix);
          return served.every((list) => list.length === 1);
        },
        { timeoutMs: 40_000, intervalMs: 200 },
      ).catch(() => false);
      return { ms: ok ? Date.now() - from : -1, served: served.map((list) => list.join('+')) };
    };
    // 1. nats-server killed, started again 3 s later on the same port and store.
    const faultsFrom = Date.now();
    await stack.nats.restart(RESTART_DOWN_MS);
    const restartedAt = Date.now();
    const afterRestart = await recovered();
    await sleep(2000); // load between the faults, not a wait for a condition
    // 2. nats-server frozen for 10 s.
    const stalledAt = Date.now();
    stack.nats.server.pause();
    try {
      await sleep(STALL_MS);
    } finally {
      stack.nats.server.resume();
    }
    const resumedAt = Date.now();
    const afterStall = await recovered();
    await sleep(2000);
    stopCreating.abort();
    stopLoad.abort();
    await creating;
    await load.done;
    await Promise.all(creations.map((c) => c.done));
    const loadEndedAt = Date.now();

    // A creation that failed is sent again, the same one (its id): it opens the channel, accepted by its invitee.
    const failedCreations = creations.filter((c) => c.error !== null);
    const resent = await Promise.all(
      failedCreations.map(async (c) => {
        const rpc = clients[0] ?? admin;
        const accepting = c.accepted.then((first) =>
          first.error === null ? first : acceptInvite(stack.nc, rpc, c.b, Date.now() + 30_000),
        );
        const again = rpc
          .call(
            'createChannel',
            { type: 'conversation', participants: [c.b], channel_id: c.channel },
            { caller: c.a, retryForMs: 30_000 },
          )
          .then(
            (r) => `${r.channel.channel_id === c.channel ? '' : 'another id '}${r.channel.state}`,
            (err: unknown) => describeError(err),
          );
        return { channel: c.channel, answer: await again, accepted: (await accepting).error };
      }),
    );

    // Every partition held by a live hub, served by it alone; how many moved (a new lease term) over the outages.
    const final = await settled('every partition held after the outages', 30_000);
    const changes = (from: readonly string[], to: readonly string[]): string[] =>
      to.flatMap((owner, k) => (owner === from[k] ? [] : [`p${k} ${from[k] ?? ''} -> ${owner}`]));
    const ownerOf = (served: string): string => served.split('@')[0] ?? '';

    // The log: every acked post once where it was acked, every channel's sequences 1..n.
    const allChannels: ChaosChannel[] = [...channels, ...creations];
    const acked = new Map<string, AckedPost>(load.acked);
    for (const c of creations) for (const [id, post] of c.posts?.acked ?? []) acked.set(id, post);
    await deliveryCaughtUp(stack.nc, names, 30_000);
    const wal = await readWholeWal(stack.nc, prefix);
    const defects = walDefects(wal, acked);

    // Deliveries: every broadcast reached every participant but its sender exactly once (read from their inboxes).
    const logged = byChannel(wal);
    const deliveryDefects: string[] = [];
    let broadcasts = 0;
    let deliveries = 0;
    for (const { channel, a, b } of allChannels) {
      const sent = (logged.get(channel) ?? []).filter(
        (e) =>
          e.audience === null && e.event_type !== EV_CHANNEL_INVITE_ACK && e.event_type !== EV_CHANNEL_INVITE_REJECT,
      );
      broadcasts += sent.length;
      for (const me of [a, b]) {
        const got = new Map<string, number>();
        for (const e of await drainInbox(stack.nc, prefix, me)) {
          if (e.channel_id === channel && e.audience === null)
            got.set(e.envelope_id, (got.get(e.envelope_id) ?? 0) + 1);
        }
        const expected = sent.filter((e) => e.sender_id !== me);
        deliveries += [...got.values()].reduce((x, y) => x + y, 0);
        for (const e of expected) {
          const n = got.get(e.envelope_id) ?? 0;
          if (n !== 1) deliveryDefects.push(`${channel} ${me}: ${e.event_type} seq ${e.sequence} received ${n} times`);
        }
        const extra = [...got.keys()].filter((id) => !expected.some((e) => e.envelope_id === id));
        for (const id of extra) deliveryDefects.push(`${channel} ${me}: ${id} received, not a broadcast to it`);
      }
    }

    // No channel stuck: each takes a post at the log's next sequence, and is open.
    const probes = await probeEveryChannel(stack.nc, admin, allChannels);
    const states = await Promise.all(
      allChannels.map(async ({ channel, a }) => {
        try {
          const { channel: m } = await admin.call('getChannel', { channel_id: channel }, { caller: a });
          return { channel, state: m.state, pending: m.pending_acks.length };
        } catch (err) {
          return { channel, state: describeError(err), pending: -1 };
        }
      }),
    );

    // The evidence for a channel that is not open: its log and, for a creation, how it and its acceptance went.
    const creationOf = new Map(creations.map((c) => [c.channel, c]));
    const evidence: string[] = [];
    for (const s of states.filter((x) => x.state !== 'active' || x.pending !== 0)) {
      const c = creationOf.get(s.channel);
      const acceptance = c === undefined ? null : await c.accepted;
      evidence.push(
        `${s.channel} (p${partitionOf(s.channel, PARTITIONS)}) ${s.state}: ` +
          (c === undefined
            ? 'a load channel'
            : `created ${at(c.startedAt)}..${at(c.endedAt)} ${c.error ?? 'ok'}; invite read ${at(acceptance?.readAt ?? 0)}, ack acked ${at(acceptance?.ackedAt ?? 0)} ${acceptance?.error ?? ''}`),
        ...(logged.get(s.channel) ?? []).map(
          (e) => `  seq ${e.sequence} ${e.event_type} from ${e.sender_id} at ${e.created_at} id ${e.envelope_id}`,
        ),
      );
    }

    const kinds = new Map<string, number>();
    for (const c of failedCreations) {
      const kind =
        /^(\w+ \w+)[^(]*(?:\((\w+))?/
          .exec(c.error ?? '')
          ?.slice(1)
          .join(' ') ?? '';
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
    const postCauses = new Map<string, number>();
    for (const a of failedPosts) {
      const kind = /\((\w+)/.exec(a.error ?? '')?.[1] ?? (a.error ?? '').slice(0, 40);
      postCauses.set(kind, (postCauses.get(kind) ?? 0) + 1);
    }
    const createdPosts = creations.reduce((n, c) => n + (c.posts?.acked.size ?? 0), 0);
    process.stdout.write(
      [
        `hubs settled at ${at(settledAt)}; restart at ${at(faultsFrom)}..${at(restartedAt)}, every partition served again ${afterRestart.ms} ms later; stall at ${at(stalledAt)}..${at(resumedAt)}, every partition served again ${afterStall.ms} ms later; load ended at ${at(loadEndedAt)}, checks done at ${at(Date.now())}`,
        `posts acked: ${load.acked.size} on ${channels.length} load channels, ${createdPosts} in opened channels; failed attempts ${failedPosts.length} by cause ${JSON.stringify([...postCauses])}`,
        `creations: ${creations.length}, succeeded ${creations.length - failedCreations.length}, failed ${failedCreations.length} by kind ${JSON.stringify([...kinds])}`,
        `resent creations: ${JSON.stringify(resent.map((r) => `${r.answer}${r.accepted === null ? '' : ` (accept: ${r.accepted})`}`))}`,
        `broadcasts ${broadcasts}, deliveries read ${deliveries}`,
        `partitions before ${JSON.stringify(initial)}, between ${JSON.stringify(afterRestart.served)}, after the stall ${JSON.stringify(afterStall.served)}, at the end ${JSON.stringify(final)}`,
        `new lease terms by the restart: ${changes(initial, afterRestart.served).length} ${JSON.stringify(changes(initial, afterRestart.served))}`,
        `new lease terms by the stall: ${changes(afterRestart.served, afterStall.served).length} ${JSON.stringify(changes(afterRestart.served, afterStall.served))}`,
        `partitions whose owner changed over both outages (at the end): ${JSON.stringify(changes(initial.map(ownerOf), final.map(ownerOf)))}`,
        `served again after the restart: ${JSON.stringify(servedAgain(hubs, restartedAt))}`,
        `served again after the stall: ${JSON.stringify(servedAgain(hubs, resumedAt))}`,
        `new terms since the first fault: ${JSON.stringify(logCounts(hubs, 'lease acquired; hydrating', faultsFrom))}`,
        `lapses: ${JSON.stringify(logCounts(hubs, 'lease lapsed; serving nothing while it is renewed', faultsFrom))}`,
        `renewed after a lapse: ${JSON.stringify(logCounts(hubs, 'lease renewed after a lapse; serving again', faultsFrom))}`,
        `lost: ${JSON.stringify(logCounts(hubs, 'lease lost; stepped down', faultsFrom))}`,
        `hand-overs: ${JSON.stringify(logCounts(hubs, 'handing the partition over to its preferred owner', faultsFrom))}`,
        ...evidence,
        '',
      ].join('\n'),
    );

    expect(hubs.map((h) => [h.name, h.child.exitCode, h.child.signalCode])).toEqual(
      HUBS.map((h) => [`hub-${h}`, null, null]),
    );
    expect(load.errors).toEqual([]);
    expect(creations.flatMap((c) => c.posts?.errors ?? [])).toEqual([]);
    expect(defects).toEqual([]);
    expect(deliveryDefects).toEqual([]);
    expect(probes.filter((p) => p.acked !== p.expected)).toEqual([]);
    expect(states.filter((s) => s.state !== 'active' || s.pending !== 0)).toEqual([]);
    expect(failedCreations.filter((c) => !c.retryable).map((c) => `${c.channel}: ${c.error ?? ''}`)).toEqual([]);
    expect(resent.filter((r) => r.answer !== 'active' || r.accepted !== null)).toEqual([]);
    expect(final.filter((owner) => !HUBS.some((h) => owner.startsWith(`${h}@`)))).toEqual([]);
  }, 150_000);
});
