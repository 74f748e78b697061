import type { Hub, HubObserver } from '@ag2net/hub';
import {
  createMetricsRegistry,
  startOpsServer,
  startTracing,
  watchConnection,
  type ConnectionWatch,
  type WatchedConnection,
} from '@ag2net/telemetry';
import type { Logger } from 'pino';
import type { HubServiceConfig } from './config.js';
import { hubMetrics } from './metrics.js';
import { hubReadiness } from './readiness.js';

/** The service's operations side: tracing, metrics and, with `--http-port`, the HTTP port. */
export interface HubServiceOps {
  /** Feeds the metrics; pass to `startHub({ observer })`. */
  readonly observer: HubObserver;
  /** Tells readiness about the NATS connection. */
  connected(nc: WatchedConnection): void;
  /** From now on not ready. */
  stopping(): void;
  /** Closes the HTTP port and flushes traces. Idempotent. */
  close(): Promise<void>;
}

/**
 * Installs tracing (when the `OTEL_*` variables ask for it), the metrics, and the HTTP port of `/healthz`, `/readyz`
 * and `/metrics` when `config.httpPort` is set. `held.hub` is read at every scrape and readiness check.
 */
export async function startOps(deps: {
  readonly config: HubServiceConfig;
  readonly log: Logger;
  readonly held: { readonly hub?: Hub };
}): Promise<HubServiceOps> {
  const { config, log, held } = deps;
  const tracing = startTracing({ serviceName: 'ag2net-hub' });
  if (tracing !== null) log.info({}, 'tracing on (OTEL_* settings)');
  const registry = createMetricsRegistry();
  const observer = hubMetrics(registry, () => held.hub);
  let connection: ConnectionWatch | undefined;
  let stopping = false;
  const server =
    config.httpPort === undefined
      ? null
      : await startOpsServer({
          port: config.httpPort,
          registry,
          logger: log,
          readiness: () => hubReadiness({ hub: held.hub, connection, stopping }),
        });
  if (server !== null) log.info({ port: server.port }, 'serving /healthz, /readyz and /metrics');
  let closing: Promise<void> | null = null;
  return {
    observer,
    connected: (nc) => {
      connection = watchConnection(nc);
    },
    stopping: () => {
      stopping = true;
    },
    close: () => {
      closing ??= Promise.all([server?.close(), tracing?.shutdown()]).then(
        () => undefined,
        (err: unknown) => log.warn({ err }, 'closing the ops port or flushing traces failed'),
      );
      return closing;
    },
  };
}
