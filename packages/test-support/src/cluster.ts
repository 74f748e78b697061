import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { connect, type Authenticator } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { setTimeout as sleep } from 'node:timers/promises';
import { startNatsServer, type NatsServer } from './server.js';

/** A JetStream cluster of real nats-server processes on loopback. */
export interface NatsCluster {
  /** The running nodes, in start order. `kill()` and `restart()` act on one node. */
  readonly servers: NatsServer[];
  /** Client URLs of every node, for `connect({ servers })`. */
  readonly urls: string[];
  /**
   * The index in `servers` of the node that leads `stream` (its JetStream stream leader), asked through the live
   * nodes; waits up to `timeoutMs` (default 15 000) while the stream has no leader.
   */
  streamLeader(stream: string, timeoutMs?: number): Promise<number>;
  /** Crashes node `index` (SIGKILL); its store stays for `restartNode`. */
  killNode(index: number): Promise<void>;
  /** Starts node `index` again on the same ports and store, after `killNode`. */
  restartNode(index: number): Promise<void>;
  /** Stops every node and removes their stores. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Starts an `n`-node (default 3) JetStream cluster on loopback and waits until it has a meta leader. */
export async function startNatsCluster(
  n = 3,
  options: {
    readonly readyTimeoutMs?: number;
    /** Configuration appended to every node's (e.g. an operator-mode `auth.conf`). */
    readonly extraConfig?: string;
    /** Credentials the readiness probes connect with, on a cluster that refuses anonymous connections. */
    readonly authenticator?: Authenticator;
    /** Chooses each node's route port; default a port free when chosen (the kit's own tests give a taken one). */
    readonly routePort?: () => Promise<number>;
  } = {},
): Promise<NatsCluster> {
  const servers = await startNodes(n, {
    extraConfig: options.extraConfig ?? '',
    routePort: options.routePort ?? freePort,
  });
  const urls = servers.map((s) => s.url);
  const probe = options.authenticator === undefined ? {} : { authenticator: options.authenticator };
  await waitForMetaLeader(urls, options.readyTimeoutMs ?? 30_000, probe);
  const killed = new Set<number>();
  const node = (index: number): NatsServer => {
    const server = servers[index];
    if (server === undefined) throw new RangeError(`no node ${index} in a ${servers.length}-node cluster`);
    return server;
  };
  const stop = async (): Promise<void> => {
    await Promise.all(
      servers.map(async (s, i) => {
        // A killed node's `stop()` keeps its store (it is kept for a restart): remove it here.
        if (killed.has(i)) await rm(s.storeDir, { recursive: true, force: true });
        else await s.stop();
      }),
    );
  };
  return {
    servers,
    urls,
    streamLeader: (stream, timeoutMs = 15_000) => streamLeaderIndex(servers, stream, { timeoutMs, probe }),
    async killNode(index) {
      killed.add(index);
      await node(index).kill();
    },
    async restartNode(index) {
      servers[index] = await node(index).restart();
      killed.delete(index);
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

/** Tries at starting the nodes when a route port was taken between choosing it and the node's bind. */
const PORT_ATTEMPTS = 4;

/**
 * Starts `n` nodes routed to each other. A route port is chosen free but bound only when its node starts, and
 * another process (a parallel test's server or client) may take it in between: then every node started is stopped
 * and the nodes start again on fresh ports.
 */
async function startNodes(
  n: number,
  how: { readonly extraConfig: string; readonly routePort: () => Promise<number> },
): Promise<NatsServer[]> {
  const { extraConfig, routePort } = how;
  for (let attempt = 1; ; attempt += 1) {
    const routePorts = await Promise.all(Array.from({ length: n }, () => routePort()));
    const routes = routePorts.map((p) => `nats-route://127.0.0.1:${p}`).join(', ');
    const started = await Promise.allSettled(
      routePorts.map((routePort, i) =>
        startNatsServer({
          name: `n${i + 1}`,
          extraConfig: `cluster { name: ag2net, listen: 127.0.0.1:${routePort}, routes: [${routes}] }\n${extraConfig}`,
        }),
      ),
    );
    const servers = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failure = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure === undefined) return servers;
    await Promise.all(servers.map((server) => server.stop()));
    const reason: unknown = failure.reason;
    if (attempt >= PORT_ATTEMPTS || !(reason instanceof Error) || !/address already in use/.test(reason.message)) {
      throw reason;
    }
  }
}

/** How the cluster's own probes connect: anonymously, or with the given credentials. */
type Probe = { readonly authenticator?: Authenticator };

async function streamLeaderIndex(
  servers: readonly NatsServer[],
  stream: string,
  options: { readonly timeoutMs: number; readonly probe: Probe },
): Promise<number> {
  const deadline = Date.now() + options.timeoutMs;
  const nc = await connect({ servers: servers.map((s) => s.url), maxReconnectAttempts: -1, ...options.probe });
  try {
    const jsm = await jetstreamManager(nc, { timeout: 2000 });
    for (;;) {
      let leader: string | undefined;
      try {
        leader = (await jsm.streams.info(stream)).cluster?.leader;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`no leader for stream ${stream}`, { cause: err });
      }
      // Nodes are named n1, n2, … in start order (see `startNatsCluster`).
      const index = leader === undefined ? -1 : Number(leader.replace(/^n/, '')) - 1;
      if (index >= 0 && index < servers.length) return index;
      if (Date.now() > deadline) throw new Error(`no leader for stream ${stream} (last seen: ${String(leader)})`);
      await sleep(100);
    }
  } finally {
    await nc.close();
  }
}

async function waitForMetaLeader(urls: readonly string[], timeoutMs: number, probe: Probe): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const nc = await connect({ servers: [...urls], maxReconnectAttempts: -1, ...probe });
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
