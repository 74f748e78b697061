import { createMetricsRegistry, startOpsServer, type OpsLogger, type Readiness } from '@ag2net/telemetry';
import { bridgeMetrics, type BridgeObserver } from './metrics.js';
import type { Bridge } from './server.js';

/** The bridge's operations side: its metrics and, with `--ops-port`, the HTTP port of `/healthz`, `/readyz`, `/metrics`. */
export interface BridgeOps {
  /** Feeds the metrics; pass to `startBridge({ observer })`. */
  readonly observer: BridgeObserver;
  /** The bridge started: readiness and the gauges follow it from now on. */
  serving(bridge: Bridge): void;
  /** From now on not ready. */
  stopping(): void;
  /** The port `/metrics` is served on; null without one. */
  readonly port: number | null;
  /** Closes the HTTP port. Idempotent. */
  close(): Promise<void>;
}

/**
 * Installs the bridge's metrics and, when `port` is given (0 picks a free one, logged), the HTTP port of `/healthz`,
 * `/readyz` and `/metrics`. The port is separate from the API's: probes and scrapes need no token and are not rate
 * limited, and it can stay inside the cluster while the API is exposed.
 */
export async function startBridgeOps(options: {
  readonly port: number | undefined;
  readonly log: OpsLogger & { info(obj: object, msg?: string): void };
  readonly host?: string;
}): Promise<BridgeOps> {
  const registry = createMetricsRegistry();
  let bridge: Bridge | null = null;
  let stopping = false;
  const observer = bridgeMetrics(registry, () => bridge?.state() ?? null);
  const server =
    options.port === undefined
      ? null
      : await startOpsServer({
          port: options.port,
          registry,
          logger: options.log,
          ...(options.host === undefined ? {} : { host: options.host }),
          readiness: () => bridgeReadiness({ bridge, stopping }),
        });
  if (server !== null) options.log.info({ port: server.port }, 'serving /healthz, /readyz and /metrics');
  return {
    observer,
    port: server?.port ?? null,
    serving: (started) => {
      bridge = started;
    },
    stopping: () => {
      stopping = true;
    },
    close: () => server?.close() ?? Promise.resolve(),
  };
}

/**
 * Ready when the bridge serves and its own NATS connections (the registrant's, the operator's) are up: every request
 * goes to the hub over one of them or over a person's connection on the same server. Not ready while connecting, while
 * a connection is down (until its `reconnect`), and from the first stop signal on.
 */
export function bridgeReadiness(state: { readonly bridge: Bridge | null; readonly stopping: boolean }): Readiness {
  if (state.stopping) return { ready: false, reason: 'stopping' };
  if (state.bridge === null) return { ready: false, reason: 'connecting to NATS' };
  const now = state.bridge.state();
  if (!now.hubConnected) return { ready: false, reason: 'NATS connection down; reconnecting' };
  return { ready: true, reason: `serving; ${now.people} person(s) signed in` };
}
