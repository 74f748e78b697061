import { HubRpc } from '@ag2net/client';
import { uniqueName, waitFor } from '@ag2net/test-support';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  deliveryCaughtUp,
  openChannels,
  probeEveryChannel,
  readWholeWal,
  runLoad,
  walDefects,
} from './support/chaos-load.js';
import { fileStack } from './support/file-stack.js';
import { startHubService } from './support/processes.js';

/**
 * nats-server crashes under load and comes back 3 s later on the same port and store dir. The lease (10 s) outlives
 * the outage, so the active hub has no reason to give it up: it keeps its term and serves again, clients see no
 * error (they retry no-responders, timeouts of idempotent posts and `unavailable`), and the log holds every acked
 * post once, gap-free, with no channel stuck.
 */

const LEASE_TTL_MS = 10_000;
const CHANNELS = 10;
const POSTS_PER_CHANNEL = 30;
const CLIENTS = 3;

const stack = fileStack();
const clientConnections: NatsConnection[] = [];

beforeAll(async () => {
  for (let i = 0; i < CLIENTS; i += 1) {
    clientConnections.push(await connect({ servers: stack.url, maxReconnectAttempts: -1, reconnectTimeWait: 250 }));
  }
});

afterAll(async () => {
  await Promise.all(clientConnections.splice(0).map((nc) => nc.close()));
});

describe('chaos: nats-server restarted under load', () => {
  it('a 3 s restart on the same store: no client error, the active hub keeps its term, acked posts once, sequences gap-free, no channel stuck', async () => {
    const prefix = uniqueName('restart');
    const admin = new HubRpc(stack.nc, { prefix, retryForMs: 40_000 });
    const first = stack.track(
      startHubService({ natsUrl: stack.url, prefix, hubId: 'first', leaseTtlMs: LEASE_TTL_MS }),
    );
    await waitFor(async () => (await admin.call('health', {}, undefined, { timeout: 1000 })).hub_id === 'first', {
      timeoutMs: 30_000,
      what: 'the first hub to serve',
    });
    const second = stack.track(
      startHubService({ natsUrl: stack.url, prefix, hubId: 'second', leaseTtlMs: LEASE_TTL_MS }),
    );
    await waitFor(() => second.output().includes('competing for the lease'), {
      timeoutMs: 30_000,
      what: 'the standby',
    });
    const channels = await openChannels(stack.nc, admin, CHANNELS);

    const before = await admin.call('health', {}, undefined, { timeout: 2000 });
    const clients = clientConnections.map((nc) => new HubRpc(nc, { prefix, retryForMs: 40_000 }));
    const load = runLoad({ clients, channels, postsPerChannel: POSTS_PER_CHANNEL, attemptTimeoutMs: 1000 });
    await load.ackedAtLeast((CHANNELS * POSTS_PER_CHANNEL) / 4);
    await stack.nats.restart(3000);
    await load.done;

    const health = await admin.call('health', {}, undefined, { timeout: 2000 });
    expect(load.errors).toEqual([]);
    expect([health.hub_id, health.role, health.epoch]).toEqual(['first', 'active', before.epoch]);
    expect([first.child.exitCode, second.child.exitCode]).toEqual([null, null]);
    expect(walDefects(await readWholeWal(stack.nc, prefix), load.acked)).toEqual([]);
    const probes = await probeEveryChannel(stack.nc, admin, channels);
    expect(probes.filter((p) => p.acked !== p.expected)).toEqual([]);
    await deliveryCaughtUp(stack.nc, prefix, 30_000);
    expect(walDefects(await readWholeWal(stack.nc, prefix), load.acked)).toEqual([]);
  }, 60_000);
});
