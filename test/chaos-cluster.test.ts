import { HubRpc } from '@ag2net/client';
import { hubNames } from '@ag2net/protocol';
import { startNatsCluster, uniqueName, waitFor, type NatsCluster } from '@ag2net/test-support';
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
import { startHubService, type ServiceProcess } from './support/processes.js';

/**
 * A 3-node JetStream cluster with every hub stream and bucket at R3. The node leading the WAL stream is killed
 * while clients post: the stream elects a new leader on the two survivors. Clients must see no error at all (the
 * hub retries the append through the election or answers `unavailable`, which clients retry like no-responders),
 * and the log must hold every acked post once, gap-free.
 */

const CHANNELS = 10;
const POSTS_PER_CHANNEL = 20;
const CLIENTS = 3;
/** Longer than a stream leader election (4–6 s seen on this machine), so a sound hub keeps its lease through it. */
const LEASE_TTL_MS = 10_000;

let cluster: NatsCluster | null = null;
let nc: NatsConnection | null = null;
const clientConnections: NatsConnection[] = [];
const services: ServiceProcess[] = [];

const running = (): { cluster: NatsCluster; nc: NatsConnection } => {
  if (cluster === null || nc === null) throw new Error('the cluster is not running');
  return { cluster, nc };
};

beforeAll(async () => {
  cluster = await startNatsCluster(3);
  const servers = cluster.urls;
  nc = await connect({ servers, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  for (let i = 0; i < CLIENTS; i += 1) {
    clientConnections.push(await connect({ servers, maxReconnectAttempts: -1, reconnectTimeWait: 250 }));
  }
}, 60_000);

afterAll(async () => {
  await Promise.all(services.splice(0).map((s) => s.stop('SIGKILL')));
  await Promise.all(clientConnections.splice(0).map((c) => c.close()));
  await nc?.close();
  await cluster?.stop();
}, 30_000);

describe('chaos: the WAL leader node of a 3-node R3 cluster killed under load', () => {
  it('zero client-visible errors, acked posts once, sequences gap-free, no channel stuck, every admitted envelope fanned out', async () => {
    const { cluster: nodes, nc: conn } = running();
    const prefix = uniqueName('r3');
    const natsUrl = nodes.urls.join(',');
    const admin = new HubRpc(conn, { prefix, retryForMs: 40_000 });
    const hub = (hubId: string): ServiceProcess => {
      const service = startHubService({
        natsUrl,
        prefix,
        hubId,
        leaseTtlMs: LEASE_TTL_MS,
        extraArgs: ['--replicas', '3'],
      });
      services.push(service);
      return service;
    };
    hub('first');
    await waitFor(async () => (await admin.call('health', {}, { timeout: 1000 })).hub_id === 'first', {
      timeoutMs: 40_000,
      what: 'the first hub to serve',
    });
    const second = hub('second');
    await waitFor(() => second.output().includes('competing for the lease'), {
      timeoutMs: 30_000,
      what: 'the standby',
    });
    const channels = await openChannels(conn, admin, CHANNELS);

    const clients = clientConnections.map((c) => new HubRpc(c, { prefix, retryForMs: 40_000 }));
    const load = runLoad({ clients, channels, postsPerChannel: POSTS_PER_CHANNEL, attemptTimeoutMs: 2000 });
    await load.ackedAtLeast((CHANNELS * POSTS_PER_CHANNEL) / 4);
    const leader = await nodes.streamLeader(hubNames(prefix).walStream);
    await nodes.killNode(leader);
    await load.done;

    expect({ errors: load.errors.length, first: load.errors.slice(0, 5) }).toEqual({ errors: 0, first: [] });
    expect(load.acked.size).toBe(CHANNELS * POSTS_PER_CHANNEL);
    expect(walDefects(await readWholeWal(conn, prefix), load.acked)).toEqual([]);
    const probes = await probeEveryChannel(conn, admin, channels);
    expect(probes.filter((p) => p.acked !== p.expected)).toEqual([]);
    await deliveryCaughtUp(conn, prefix, 30_000);
    expect(walDefects(await readWholeWal(conn, prefix), load.acked)).toEqual([]);
  }, 90_000);
});
