import type { TurnObserver } from '@ag2net/agent';
import type { AgentClient } from '@ag2net/client';
import {
  createMetricsRegistry,
  startOpsServer,
  startTracing,
  watchConnection,
  type ConnectionWatch,
  type Readiness,
} from '@ag2net/telemetry';
import type { Logger } from 'pino';
import { runnerMetrics } from './metrics.js';

/** The runner's operations side: tracing, turn metrics and, with `--http-port`, the HTTP port. */
export interface RunnerOps {
  /** Feeds the turn metrics; pass to each hosted agent. */
  readonly observer: TurnObserver;
  /** The agents are hosted: readiness follows their connections and inboxes from now on. */
  hosting(clients: readonly AgentClient[]): void;
  /** From now on not ready. */
  stopping(): void;
  /** Closes the HTTP port and flushes traces. Idempotent. */
  close(): Promise<void>;
}

/** One hosted agent as readiness sees it. */
interface Hosted {
  readonly name: string;
  readonly connection: ConnectionWatch;
  ended: boolean;
}

/**
 * Installs tracing (when the `OTEL_*` variables ask for it), the turn metrics, and the HTTP port of `/healthz`,
 * `/readyz` and `/metrics` when `port` is given (0 picks a free one, logged).
 */
export async function startRunnerOps(options: {
  readonly port: number | undefined;
  readonly log: Logger;
}): Promise<RunnerOps> {
  const { log } = options;
  const tracing = startTracing({ serviceName: 'ag2net-runner' });
  if (tracing !== null) log.info({}, 'tracing on (OTEL_* settings)');
  const registry = createMetricsRegistry();
  const observer = runnerMetrics(registry);
  let hosted: Hosted[] | null = null;
  let stopping = false;
  const server =
    options.port === undefined
      ? null
      : await startOpsServer({
          port: options.port,
          registry,
          logger: log,
          readiness: () => runnerReadiness({ hosted, stopping }),
        });
  if (server !== null) log.info({ port: server.port }, 'serving /healthz, /readyz and /metrics');
  let closing: Promise<void> | null = null;
  return {
    observer,
    hosting: (clients) => {
      hosted = clients.map((client) => {
        const entry: Hosted = { name: client.passport.name, connection: watchConnection(client.hub.nc), ended: false };
        void client.closed().then(() => {
          entry.ended = true;
        });
        return entry;
      });
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

/**
 * Ready when every hosted agent's connection is up and its inbox is consuming. Not ready while the agents are
 * being registered or attached, when one's connection is down or its inbox ended, and from the first stop signal on.
 */
export function runnerReadiness(state: {
  readonly hosted: readonly Hosted[] | null;
  readonly stopping: boolean;
}): Readiness {
  if (state.stopping) return { ready: false, reason: 'stopping' };
  if (state.hosted === null) return { ready: false, reason: 'registering the hosted agents' };
  const down = state.hosted.filter((h) => !h.connection.connected()).map((h) => h.name);
  if (down.length > 0) return { ready: false, reason: `NATS connection down for ${down.join(', ')}; reconnecting` };
  const ended = state.hosted.filter((h) => h.ended).map((h) => h.name);
  if (ended.length > 0) return { ready: false, reason: `inbox ended for ${ended.join(', ')}` };
  return { ready: true, reason: `${state.hosted.length} agent(s) consuming` };
}
