import { HubRpc } from '@ag2net/client';
import { startHub } from '@ag2net/hub';
import { pauseFor, uniqueName, waitFor } from '@ag2net/test-support';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  deliveryCaughtUp,
  openChannels,
  probeEveryChannel,
  readWholeWal,
  runLoad,
  walDefects,
} from './support/chaos-load.js';
import { fileStack } from './support/file-stack.js';
import { startService, type ServiceProcess } from './support/processes.js';

/**
 * The active hub frozen (SIGSTOP) under load and let go (SIGCONT), for pauses shorter than, about as long as, and
 * far longer than the lease: the frozen hub still holds its RPC subscription, so requests queue up in it and it
 * wakes up holding writes a successor may already have made. Whatever happened meanwhile, the log must stay the
 * single truth: every acked post once, per-channel sequences 1..n, no channel stuck, live state equal to the fold.
 */

const LEASE_TTL_MS = 2000;
const CHANNELS = 12;
const POSTS_PER_CHANNEL = 30;
const CLIENTS = 3;

const stack = fileStack();
const clientConnections = stack.clients(CLIENTS);

/** A hub process that answers `<prefix>.test.<hubId>.snapshot` with its live state (support/snapshot-hub.ts). */
function startSnapshotHub(prefix: string, hubId: string): ServiceProcess {
  return stack.track(
    startService(`hub-${hubId}`, 'test/support/snapshot-hub.ts', [stack.url, prefix, hubId, String(LEASE_TTL_MS)]),
  );
}

/** What support/snapshot-hub.ts answers: the role and the `HubSnapshot` of the process, as plain data. */
const LiveStateSchema = z.strictObject({
  role: z.string(),
  epoch: z.number(),
  snapshot: z.strictObject({
    agents: z.array(z.unknown()),
    channels: z.array(z.unknown()),
    inbox_pending: z.array(z.unknown()),
    tasks: z.array(z.unknown()),
  }),
});
type LiveState = z.infer<typeof LiveStateSchema>;

async function liveState(prefix: string, hubId: string): Promise<LiveState> {
  const reply = await stack.nc.request(`${prefix}.test.${hubId}.snapshot`, '', { timeout: 10_000 });
  return LiveStateSchema.parse(JSON.parse(reply.string()));
}

async function pauseUnderLoad(pauseMs: number): Promise<void> {
  const prefix = uniqueName('pause');
  const admin = new HubRpc(stack.nc, { prefix, retryForMs: 30_000 });
  const first = startSnapshotHub(prefix, 'first');
  await waitFor(async () => (await admin.call('health', {}, { timeout: 1000 })).hub_id === 'first', {
    timeoutMs: 30_000,
    what: 'the first hub to serve',
  });
  const second = startSnapshotHub(prefix, 'second');
  await waitFor(async () => (await liveState(prefix, 'second')).role === 'standby', {
    timeoutMs: 30_000,
    what: 'the standby to start',
  });
  const channels = await openChannels(stack.nc, admin, CHANNELS);

  const clients = clientConnections.map((nc) => new HubRpc(nc, { prefix, retryForMs: 40_000 }));
  const load = runLoad({ clients, channels, postsPerChannel: POSTS_PER_CHANNEL, attemptTimeoutMs: 1000 });
  await load.ackedAtLeast((CHANNELS * POSTS_PER_CHANNEL) / 4);
  const pid = first.child.pid;
  if (pid === undefined) throw new Error('the first hub has no pid');
  await pauseFor(pid, pauseMs);
  await load.done;

  // Both processes are alive; exactly one of them is the active hub.
  expect([first.child.exitCode, second.child.exitCode]).toEqual([null, null]);
  await deliveryCaughtUp(stack.nc, prefix, 30_000);
  const roles = await waitFor(
    async () => {
      const seen = [(await liveState(prefix, 'first')).role, (await liveState(prefix, 'second')).role];
      return seen.filter((r) => r === 'active').length === 1 ? seen : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 100, what: 'exactly one active hub' },
  );
  const activeId = roles[0] === 'active' ? 'first' : 'second';

  // Every acked post is in the WAL once, where it was acked; every channel's sequences run 1..n.
  expect(walDefects(await readWholeWal(stack.nc, prefix), load.acked)).toEqual([]);
  // No channel is stuck, and the hub's next sequence is the log's.
  const probes = await probeEveryChannel(stack.nc, admin, channels);
  expect(probes.filter((p) => p.acked !== p.expected)).toEqual([]);
  expect(walDefects(await readWholeWal(stack.nc, prefix), load.acked)).toEqual([]);

  // Live state equals the fold: the active process's state against a hub hydrated cold from the same NATS.
  await deliveryCaughtUp(stack.nc, prefix, 30_000);
  const live = (await liveState(prefix, activeId)).snapshot;
  const standby = activeId === 'first' ? second : first;
  const active = activeId === 'first' ? first : second;
  expect(await standby.stop('SIGTERM')).toBe(0);
  expect(await active.stop('SIGTERM')).toBe(0);
  const cold = await startHub({ connection: stack.nc, prefix, hubId: 'cold', leaseTtlMs: LEASE_TTL_MS });
  try {
    expect(cold.snapshot()).toEqual(live);
  } finally {
    await cold.close();
  }
  // Reported, not asserted: a client error is allowed here as long as the log and the state stay sound.
  if (load.errors.length > 0) process.stdout.write(`pause ${pauseMs} ms: client errors:\n${load.errors.join('\n')}\n`);
}

describe('chaos: the active hub paused (SIGSTOP/SIGCONT) under load, lease 2 s', () => {
  it('pause 1 s (below the lease): acked posts once, sequences gap-free, no channel stuck, live state equals the fold', async () => {
    await pauseUnderLoad(1000);
  }, 60_000);

  it('pause 2.5 s (around the lease): acked posts once, sequences gap-free, no channel stuck, live state equals the fold', async () => {
    await pauseUnderLoad(2500);
  }, 60_000);

  it('pause 7 s (well past the lease, a standby takes over): acked posts once, sequences gap-free, no channel stuck, live state equals the fold', async () => {
    await pauseUnderLoad(7000);
  }, 60_000);
});
