import { createServer } from 'node:net';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { setTimeout as sleep } from 'node:timers/promises';
import { startNatsServer, type NatsServer } from './server.js';

/** A JetStream cluster of real nats-server processes on loopback. */
export interface NatsCluster {
  /** The running nodes, in start order. `kill()` and `restart()` act on one node. */
  readonly servers: NatsServer[];
  /** Client URLs of every node, for `connect({ servers })`. */
  readonly urls: string[];
  /** Stops every node and removes their stores. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Starts an `n`-node (default 3) JetStream cluster on loopback and waits until it has a meta leader. */
export async function startNatsCluster(
  n = 3,
  options: { readonly readyTimeoutMs?: number } = {},
): Promise<NatsCluster> {
  const routePorts = await Promise.all(Array.from({ length: n }, () => freePort()));
  const routes = routePorts.map((p) => `nats-route://127.0.0.1:${p}`).join(', ');
  const servers = await Promise.all(
    routePorts.map((routePort, i) =>
      startNatsServer({
        name: `n${i + 1}`,
        extraConfig: `cluster { name: ag2net, listen: 127.0.0.1:${routePort}, routes: [${routes}] }`,
      }),
    ),
  );
  const urls = servers.map((s) => s.url);
  await waitForMetaLeader(urls, options.readyTimeoutMs ?? 30_000);
  const stop = async (): Promise<void> => {
    await Promise.all(servers.map((s) => s.stop()));
  };
  return { servers, urls, stop, [Symbol.asyncDispose]: stop };
}

async function waitForMetaLeader(urls: readonly string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const nc = await connect({ servers: [...urls], maxReconnectAttempts: -1 });
  try {
    for (;;) {
      try {
        const jsm = await jetstreamManager(nc, { timeout: 2000 });
        await jsm.getAccountInfo();
        return;
      } catch (err) {
        if (Date.now() > deadline) throw new Error('the cluster elected no JetStream leader in time', { cause: err });
        await sleep(200);
      }
    }
  } finally {
    await nc.close();
  }
}

/** A TCP port that was free a moment ago (for cluster route listeners, which need a known port up front). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
