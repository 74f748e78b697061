import { createServer, type Socket } from 'node:net';
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { afterAll, describe, expect, it } from 'vitest';
import {
  findNatsServer,
  NatsServerUnavailableError,
  startNatsCluster,
  startNatsServer,
  uniqueName,
} from '@ag2net/test-support';

describe('startNatsServer', () => {
  const started: { stop(): Promise<void> }[] = [];
  afterAll(async () => {
    await Promise.all(started.map((s) => s.stop()));
  });

  it('starts a JetStream server on a random port and keeps stored messages across a crash and restart', async () => {
    const server = await startNatsServer();
    started.push(server);
    expect(server.url).toMatch(/^nats:\/\/127\.0\.0\.1:\d+$/);
    let nc = await connect({ servers: server.url });
    const stream = uniqueName('S');
    await (await jetstreamManager(nc)).streams.add({ name: stream, subjects: [`${stream}.>`] });
    const ack = await jetstream(nc).publish(`${stream}.a`, 'one');
    expect(ack.seq).toBe(1);
    await nc.close();

    await server.kill();
    const again = await server.restart();
    started.push(again);
    expect(again.port).toBe(server.port);
    nc = await connect({ servers: again.url });
    const info = await (await jetstreamManager(nc)).streams.info(stream);
    expect(info.state.messages).toBe(1);
    await nc.close();
  });

  it('says how to install nats-server when it cannot find one', () => {
    expect(() => findNatsServer({ PATH: '/nonexistent' })).toThrow(NatsServerUnavailableError);
    expect(() => findNatsServer({ PATH: '/nonexistent' })).toThrow(/apt-get install -y nats-server/);
  });
});

describe('startNatsCluster', () => {
  it('starts three nodes that replicate a stream three ways', async () => {
    await using cluster = await startNatsCluster(3);
    const nc = await connect({ servers: cluster.urls });
    const stream = uniqueName('R');
    const info = await (
      await jetstreamManager(nc)
    ).streams.add({ name: stream, subjects: [`${stream}.>`], num_replicas: 3 });
    expect(info.config.num_replicas).toBe(3);
    expect(cluster.servers).toHaveLength(3);
    await nc.close();
  }, 60_000);
});

describe('startNatsCluster on a busy machine', () => {
  it('starts its nodes again on fresh ports when a route port was taken before its node bound it', async () => {
    // Another process holds the port chosen first for a route, as a parallel test's server may.
    const holder = createServer();
    // The nodes of the attempt that failed connected their routes to it; they are let go at the end.
    const accepted = new Set<Socket>();
    holder.on('connection', (socket) => accepted.add(socket));
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const address = holder.address();
    const taken = typeof address === 'object' && address !== null ? address.port : 0;
    const chosen: number[] = [];
    const routePort = async (): Promise<number> => {
      const port = chosen.length === 0 ? taken : await portFreeNow();
      chosen.push(port);
      return port;
    };
    try {
      await using cluster = await startNatsCluster(3, { routePort });
      expect(cluster.servers).toHaveLength(3);
      // Three ports for the attempt that failed, three fresh ones for the one that started.
      expect(chosen).toHaveLength(6);
      expect(chosen.slice(3)).not.toContain(taken);
      const nc = await connect({ servers: cluster.urls });
      const stream = uniqueName('B');
      const info = await (
        await jetstreamManager(nc)
      ).streams.add({ name: stream, subjects: [`${stream}.>`], num_replicas: 3 });
      expect(info.config.num_replicas).toBe(3);
      await nc.close();
    } finally {
      for (const socket of accepted) socket.destroy();
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  }, 60_000);
});

/** A port nothing listens on now. */
async function portFreeNow(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return typeof address === 'object' && address !== null ? address.port : 0;
}
