import { HubRpc } from '@ag2net/client';
import { hubNames } from '@ag2net/protocol';
import { uniqueName, waitFor, within } from '@ag2net/test-support';
import { Kvm } from '@nats-io/kv';
import { describe, expect, it } from 'vitest';
import {
  deliveryCaughtUp,
  openChannels,
  probeEveryChannel,
  readWholeWal,
  runLoad,
  walDefects,
} from './support/chaos-load.js';
import { fileStack } from './support/file-stack.js';
import { startHubService, type ServiceProcess } from './support/processes.js';

/**
 * nats-server faults, each while hub-service processes serve.
 * - A stall: the server frozen (SIGSTOP) for 7 s the moment a standby wins the lease, so inside its takeover.
 *   Afterwards exactly one hub serves and holds the lease, and no hub process died.
 * - A crash under load: the server killed and started again 3 s later on the same port and store dir, at the default
 *   lease (6 s). The hub reconnects every 250 ms, and a lease that lapsed during the outage is renewed rather than
 *   given up (nobody can have taken it while its revision stands): the hub keeps its term and serves again,
 *   clients see no error (they retry no-responders, timeouts of idempotent posts and `unavailable`), and the log
 *   holds every acked post once, gap-free, with no channel stuck.
 */

/** The hub's default lease: a short server restart must not cost a failover at the defaults. */
const LEASE_TTL_MS = 6_000;
const CHANNELS = 10;
const POSTS_PER_CHANNEL = 30;
const CLIENTS = 3;

const stack = fileStack();
const clientConnections = stack.clients(CLIENTS, { reconnectForever: true });

const STALL_MS = 7000;

/** Resolves with the id of the first hub other than `previous` that the lease key names (watched as it changes). */
async function nextLeaseHolder(prefix: string, previous: string, onTaken: (holder: string) => void): Promise<string> {
  const kv = await new Kvm(stack.nc).open(hubNames(prefix).leasesBucket);
  const watch = await kv.watch({ key: 'active' });
  try {
    for await (const entry of watch) {
      const holder = entry.operation === 'PUT' ? entry.string() : '';
      if (holder !== '' && holder !== previous) {
        onTaken(holder);
        return holder;
      }
    }
  } finally {
    watch.stop();
  }
  throw new Error('the lease watch ended');
}

/** `alive`, or how a service died or what crash nothing caught its log shows (for a readable failure). */
function fate(service: ServiceProcess): string {
  const crash = service
    .output()
    .split('\n')
    .find((line) => /unhandled|uncaught/i.test(line));
  if (service.child.exitCode !== null || service.child.signalCode !== null) {
    return `exited ${String(service.child.exitCode ?? service.child.signalCode)}: ${crash ?? service.output().slice(-300)}`;
  }
  return crash === undefined ? 'alive' : `alive, logged: ${crash}`;
}

describe('chaos: nats-server stalled while a standby takes over', () => {
  it('a 7 s stall during hydrate: exactly one hub serves afterwards, no process died of an unhandled rejection', async () => {
    const prefix = uniqueName('stall');
    const admin = new HubRpc(stack.nc, { prefix, retryForMs: 30_000 });
    const hub = (hubId: string): ServiceProcess =>
      stack.track(startHubService({ natsUrl: stack.url, prefix, hubId, leaseTtlMs: 2000 }));
    const first = hub('first');
    await waitFor(async () => (await admin.call('health', {}, { timeout: 1000 })).hub_id === 'first', {
      timeoutMs: 30_000,
      what: 'the first hub to serve',
    });
    const standbys = [hub('second'), hub('third')];
    for (const s of standbys) {
      await waitFor(() => s.output().includes('competing for the lease'), { timeoutMs: 30_000, what: s.name });
    }
    // Something to hydrate, so that the takeover is still under way when NATS freezes.
    const channels = await openChannels(stack.nc, admin, CHANNELS);
    const clients = clientConnections.map((nc) => new HubRpc(nc, { prefix, retryForMs: 30_000 }));
    await runLoad({ clients, channels, postsPerChannel: 10, attemptTimeoutMs: 2000 }).done;

    // Freeze nats-server the moment a standby wins the lease, that is while it starts hydrating.
    const taken = nextLeaseHolder(prefix, 'first', () => stack.nats.server.pause());
    await first.stop('SIGKILL');
    const taker = await within(taken, 20_000, 'a standby to take the lease');
    const takerProcess = standbys.find((s) => s.name === `hub-${taker}`);
    let activeBeforeResume = true;
    try {
      await new Promise((resolve) => setTimeout(resolve, STALL_MS));
      activeBeforeResume = takerProcess?.output().includes('"msg":"active"') ?? true;
    } finally {
      stack.nats.server.resume();
    }
    // The stall did land inside the takeover: the hub had not become active when NATS froze.
    expect(activeBeforeResume).toBe(false);

    await waitFor(async () => (await admin.call('health', {}, { timeout: 1000 })).role === 'active', {
      timeoutMs: 30_000,
      what: 'a hub to serve again',
    });
    const answers = [];
    for (let i = 0; i < 10; i += 1) answers.push(await admin.call('health', {}, { timeout: 2000 }));
    const serving = new Set(answers.map((h) => `${h.hub_id}/${h.role}/${h.epoch}`));
    expect(serving.size).toBe(1);
    const [servingHub] = answers.map((h) => h.hub_id);
    const kv = await new Kvm(stack.nc).open(hubNames(prefix).leasesBucket);
    expect((await kv.get('active'))?.string()).toBe(servingHub);
    expect(standbys.map((s) => [s.name, fate(s)])).toEqual([
      ['hub-second', 'alive'],
      ['hub-third', 'alive'],
    ]);
    const probes = await probeEveryChannel(stack.nc, admin, channels);
    expect(probes.filter((p) => p.acked !== p.expected)).toEqual([]);
  }, 60_000);
});

describe('chaos: nats-server restarted under load', () => {
  it('a 3 s restart on the same store: no client error, the active hub keeps its term, acked posts once, sequences gap-free, no channel stuck', async () => {
    const prefix = uniqueName('restart');
    const admin = new HubRpc(stack.nc, { prefix, retryForMs: 40_000 });
    const first = stack.track(
      startHubService({ natsUrl: stack.url, prefix, hubId: 'first', leaseTtlMs: LEASE_TTL_MS }),
    );
    await waitFor(async () => (await admin.call('health', {}, { timeout: 1000 })).hub_id === 'first', {
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

    const before = await admin.call('health', {}, { timeout: 2000 });
    const clients = clientConnections.map((nc) => new HubRpc(nc, { prefix, retryForMs: 40_000 }));
    const load = runLoad({ clients, channels, postsPerChannel: POSTS_PER_CHANNEL, attemptTimeoutMs: 1000 });
    await load.ackedAtLeast((CHANNELS * POSTS_PER_CHANNEL) / 4);
    await stack.nats.restart(3000);
    await load.done;

    const health = await admin.call('health', {}, { timeout: 2000 });
    expect({ errors: load.errors.length, first: load.errors.slice(0, 5) }).toEqual({ errors: 0, first: [] });
    expect([health.hub_id, health.role, health.epoch]).toEqual(['first', 'active', before.epoch]);
    expect([first.child.exitCode, second.child.exitCode]).toEqual([null, null]);
    expect(walDefects(await readWholeWal(stack.nc, prefix), load.acked)).toEqual([]);
    const probes = await probeEveryChannel(stack.nc, admin, channels);
    expect(probes.filter((p) => p.acked !== p.expected)).toEqual([]);
    await deliveryCaughtUp(stack.nc, prefix, 30_000);
    expect(walDefects(await readWholeWal(stack.nc, prefix), load.acked)).toEqual([]);
  }, 60_000);
});
