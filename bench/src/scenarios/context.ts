import { HubRpc } from '@ag2net/client';
import { uniqueName } from '@ag2net/test-support';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { HostProcess } from '../host/client.js';
import type { BenchSizes } from '../options.js';
import { deleteStreamsOf } from '../raw/streams.js';

/** What a scenario runs with. Each scenario gets its own prefixes and host processes, cleaned up after it. */
export interface ScenarioContext {
  /** The nats-server every process connects to. */
  readonly natsUrl: string;
  /** The driver's (load generator's) connection. */
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly sizes: BenchSizes;
  /** The pid of the nats-server the bench started (for its CPU time); `undefined` with `NATS_URL`. */
  readonly natsPid: number | undefined;
  /** Progress, on stderr. */
  log(message: string): void;
  /** A fresh prefix (hub and raw resources live under it); its streams and buckets are deleted afterwards. */
  prefix(name: string): string;
  /** A fresh host process, closed when the scenario ends. */
  host(name: string): Promise<HostProcess>;
  /** An RPC client of the hub on `prefix`. */
  rpc(prefix: string): HubRpc;
}

/** The shared parts of every scenario's context. */
export interface ContextBase {
  readonly natsUrl: string;
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly sizes: BenchSizes;
  readonly natsPid: number | undefined;
  readonly profileDir: string | undefined;
  log(message: string): void;
}

/** Runs `scenario` with a context of its own, then stops its hosts and deletes its resources. */
export async function withScenario<T>(
  base: ContextBase,
  name: string,
  scenario: (ctx: ScenarioContext) => Promise<T>,
): Promise<T> {
  const hosts: HostProcess[] = [];
  const prefixes: string[] = [];
  const ctx: ScenarioContext = {
    ...base,
    log: (message) => base.log(`${name}: ${message}`),
    prefix(label) {
      const p = uniqueName(`b${label}`);
      prefixes.push(p);
      return p;
    },
    async host(label) {
      const host = await HostProcess.start({ name: `${name}-${label}`, profileDir: base.profileDir });
      hosts.push(host);
      return host;
    },
    rpc: (prefix) => new HubRpc(base.nc, { prefix, retryForMs: 60_000 }),
  };
  try {
    return await scenario(ctx);
  } finally {
    await Promise.all(hosts.map((h) => h.close()));
    for (const p of prefixes) await deleteStreamsOf(base.jsm, p);
  }
}
