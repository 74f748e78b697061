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
