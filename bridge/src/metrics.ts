import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { LATENCY_BUCKETS_SECONDS } from '@ag2net/telemetry';

/** What the bridge tells its metrics as it serves; `startBridge({ observer })` takes one. */
export interface BridgeObserver {
  /**
   * A request's response ended (or its client left): `route` is the route's path template (`/v1/channels/{channel_id}`),
   * or `unmatched` for a path no route serves; a stream ends when its client leaves or the bridge stops.
   */
  requestFinished(request: { readonly route: string; readonly status: number; readonly seconds: number }): void;
  /** A request was refused with 429 by the rate limit. */
  rateLimited(): void;
  /** A live stream started (`+1`) or ended (`-1`). */
  streamsChanged(delta: 1 | -1): void;
}

/** What the bridge holds now, read at every scrape. */
export interface BridgeGauges {
  /** People with an identity connection open (or being attached) on this replica. */
  readonly people: number;
}

/**
 * The bridge's Prometheus metrics (docs/operations.md lists them with their meaning), registered in `registry`. The
 * returned observer goes into `startBridge({ observer })`; `gauges()` is read at every scrape (null until the bridge
 * started).
 */
export function bridgeMetrics(registry: Registry, gauges: () => BridgeGauges | null): BridgeObserver {
  const registers = [registry];
  const requests = new Counter({
    name: 'ag2net_bridge_http_requests_total',
    help: 'HTTP requests answered, by route template and status.',
    labelNames: ['route', 'status'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'ag2net_bridge_http_request_duration_seconds',
    help: 'Time from a request to the end of its response, by route template (a stream lasts until it ends).',
    labelNames: ['route'] as const,
    buckets: [...LATENCY_BUCKETS_SECONDS],
    registers,
  });
  const limited = new Counter({
    name: 'ag2net_bridge_rate_limited_total',
    help: 'Requests refused with 429 by the per-token (or per-address) rate limit.',
    registers,
  });
  const streams = new Gauge({
    name: 'ag2net_bridge_open_streams',
    help: 'Live streams (server-sent events) open now.',
    registers,
  });
  new Gauge({
    name: 'ag2net_bridge_signed_in_people',
    help: 'People with an identity connection open on this replica (closed after --idle-ms unused).',
    registers,
    collect() {
      this.set(gauges()?.people ?? 0);
    },
  });
  return {
    requestFinished: ({ route, status, seconds }) => {
      requests.inc({ route, status: String(status) });
      duration.observe({ route }, seconds);
    },
    rateLimited: () => limited.inc(),
    streamsChanged: (delta) => streams.inc(delta),
  };
}
