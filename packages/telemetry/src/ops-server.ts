import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Logger } from '@ag2net/protocol/internal';

/** What `/readyz` answers: ready or not, and in a few words why. */
export interface Readiness {
  readonly ready: boolean;
  /** One short sentence: what the process is doing, or what it waits for. */
  readonly reason: string;
}

/** What the ops server writes to: `warn` of the ag2net `Logger` (pino's is one). */
export type OpsLogger = Pick<Logger, 'warn'>;

/** Options of `startOpsServer`. */
export interface OpsServerOptions {
  /** TCP port; 0 picks a free one (read it back from `OpsServer.port`). */
  readonly port: number;
  /** Interface to listen on; default `0.0.0.0` (a container's probes come from outside it). */
  readonly host?: string;
  /** The metrics `/metrics` exposes. */
  readonly registry: Registry;
  /** Asked at every `/readyz`; a throw counts as not ready. */
  readonly readiness: () => Readiness | Promise<Readiness>;
  /** Where a failed scrape is logged; default nowhere. */
  readonly logger?: OpsLogger;
}

/** A running ops HTTP server. */
export interface OpsServer {
  /** The port it listens on. */
  readonly port: number;
  /** Stops listening and ends open connections. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Serves a service's operations endpoints over plain HTTP (GET or HEAD):
 * - `/healthz`: 200 while the process runs its event loop (liveness; restart the process when it fails).
 * - `/readyz`: 200 when `readiness()` says ready, else 503; the body is the `Readiness` as JSON.
 * - `/metrics`: the registry in the Prometheus text format.
 * Anything else is 404; other methods 405.
 */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const server = createServer((req, res) => {
    void answer(req, res, options);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? (address satisfies AddressInfo).port : options.port;
  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closing;
  };
  return { port, close, [Symbol.asyncDispose]: close };
}

async function answer(req: IncomingMessage, res: ServerResponse, options: OpsServerOptions): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    send(res, 405, { headers: { 'content-type': 'text/plain', allow: 'GET, HEAD' }, body: 'method not allowed\n' });
    return;
  }
  const path = (req.url ?? '/').split('?')[0];
  switch (path) {
    case '/healthz':
      send(res, 200, { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 'alive' }) });
      return;
    case '/readyz': {
      let readiness: Readiness;
      try {
        readiness = await options.readiness();
      } catch (err) {
        readiness = {
          ready: false,
          reason: `readiness check failed: ${err instanceof Error ? err.message : String(err)}`,
        };
      }
      send(res, readiness.ready ? 200 : 503, {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(readiness),
      });
      return;
    }
    case '/metrics':
      try {
        const body = await options.registry.metrics();
        send(res, 200, { headers: { 'content-type': options.registry.contentType }, body });
      } catch (err) {
        options.logger?.warn({ err }, 'collecting metrics failed');
        send(res, 500, { headers: { 'content-type': 'text/plain' }, body: 'collecting metrics failed\n' });
      }
      return;
    default:
      send(res, 404, {
        headers: { 'content-type': 'text/plain' },
        body: 'not found: try /healthz, /readyz or /metrics\n',
      });
  }
}

function send(
  res: ServerResponse,
  status: number,
  reply: { readonly headers: Record<string, string>; readonly body: string },
): void {
  res.writeHead(status, { ...reply.headers, 'cache-control': 'no-store' });
  res.end(res.req.method === 'HEAD' ? undefined : reply.body);
}
