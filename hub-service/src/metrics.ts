import type { Hub, HubObserver, HubView } from '@ag2net/hub';
import { violationRecordOf } from '@ag2net/protocol/internal';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { LATENCY_BUCKETS_SECONDS } from '@ag2net/telemetry';

/** What the gauges read of the hub at every scrape. */
export type HubReadings = Pick<Hub, 'role' | 'epoch' | 'health'>;

/**
 * The hub's Prometheus metrics (docs/operations.md lists them with their meaning), registered in `registry`. The
 * returned observer goes into `startHub({ observer })`; `hub()` is read at every scrape for the gauges (undefined
 * until the hub started).
 */
export function hubMetrics(registry: Registry, hub: () => HubReadings | undefined): HubObserver {
  const registers = [registry];
  const admitted = new Counter({
    name: 'ag2net_hub_admitted_total',
    help: 'RPC requests the hub carried out, by operation (op="post" counts admitted envelopes).',
    labelNames: ['op'] as const,
    registers,
  });
  const rejected = new Counter({
    name: 'ag2net_hub_rejected_total',
    help: 'RPC requests the hub refused or failed, by operation and wire error code.',
    labelNames: ['op', 'code'] as const,
    registers,
  });
  const dropped = new Counter({
    name: 'ag2net_hub_dropped_requests_total',
    help: 'Requests dropped unanswered because their reply subject could not be attributed to the caller, by operation.',
    labelNames: ['op'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'ag2net_hub_request_duration_seconds',
    help: 'Time from a parsed RPC request to its result, by operation (op="post" is the admission latency).',
    labelNames: ['op'] as const,
    buckets: [...LATENCY_BUCKETS_SECONDS],
    registers,
  });
  const lag = new Histogram({
    name: 'ag2net_hub_delivery_lag_seconds',
    help: "Time from an envelope's admission to the end of its fan-out to the audience's inboxes.",
    buckets: [...LATENCY_BUCKETS_SECONDS],
    registers,
  });
  const violations = new Counter({
    name: 'ag2net_hub_violations_total',
    help: 'Expectation violations delivered, by expectation name (acks_within, reply_within, ...).',
    labelNames: ['expectation'] as const,
    registers,
  });
  let view: HubView | null = null;
  new Gauge({
    name: 'ag2net_hub_channels',
    help: 'Channels by type and state of the partitions this hub serves (a standby reports none).',
    labelNames: ['type', 'state'] as const,
    registers,
    collect() {
      this.reset();
      // A hub that stepped down keeps its last table until it hydrates again: only the active hub's is current.
      if (hub()?.role !== 'active') return;
      for (const { type, state, count } of view?.channelCounts() ?? []) this.set({ type, state }, count);
    },
  });
  new Gauge({
    name: 'ag2net_hub_active',
    help: 'Lease role: 1 while this hub serves at least one partition (the active writer of those), 0 while it is a standby.',
    registers,
    collect() {
      this.set(hub()?.role === 'active' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'ag2net_hub_lease_epoch',
    help: 'Fencing epoch of the lease this hub holds, of its lowest partition when it holds several (0 on a standby).',
    registers,
    collect() {
      this.set(hub()?.epoch ?? 0);
    },
  });
  new Gauge({
    name: 'ag2net_hub_partitions_held',
    help: 'Partitions this hub serves now (0 on a standby).',
    registers,
    collect() {
      this.set(hub()?.health().held.length ?? 0);
    },
  });
  new Gauge({
    name: 'ag2net_hub_partitions',
    help: "Partitions the prefix's channels are spread over (0 until the hub started).",
    registers,
    collect() {
      this.set(hub()?.health().partitions ?? 0);
    },
  });
  new Gauge({
    name: 'ag2net_hub_registered_agents',
    help: 'Identities registered on the hub, as this hub knows them.',
    registers,
    collect() {
      const current = hub();
      this.set(current === undefined ? 0 : current.health().registered_agents);
    },
  });
  const sinceStart = (name: string, help: string, read: (h: HubReadings) => number): void => {
    let seen = 0;
    new Counter({
      name,
      help,
      registers,
      collect() {
        const current = hub();
        const now = current === undefined ? seen : read(current);
        if (now > seen) this.inc(now - seen);
        seen = Math.max(seen, now);
      },
    });
  };
  sinceStart(
    'ag2net_hub_dead_letters_total',
    'Deliveries given up after their retries and parked in the audit trail.',
    (h) => h.health().dead_letters,
  );
  sinceStart(
    'ag2net_hub_quarantined_total',
    'WAL messages and KV records skipped because they were not what the hub writes.',
    (h) => h.health().quarantined,
  );
  return {
    bind: (v) => {
      view = v;
    },
    requestFinished: ({ op, code, durationMs }) => {
      if (code === null) admitted.inc({ op });
      else rejected.inc({ op, code });
      duration.observe({ op }, durationMs / 1000);
    },
    requestDropped: ({ op }) => dropped.inc({ op }),
    delivered: ({ envelope, lagMs }) => {
      lag.observe(lagMs / 1000);
      const violation = violationRecordOf(envelope);
      if (violation !== null) violations.inc({ expectation: violation.expectation });
    },
  };
}
