import { createIdFactory, type HubNames } from '@ag2net/protocol';
import { KeyedSerial } from '@ag2net/protocol/internal';
import { jetstream, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { AuditLog } from './audit/audit-log.js';
import { noAdmission } from './auth/authenticator.js';
import type { CredentialsIssuer } from './auth/issuer.js';
import { ChannelTable } from './core/channel-table.js';
import type { HubContext } from './core/context.js';
import { quarantineLeaseValue } from './core/quarantine.js';
import { AgentRegistry } from './core/registry.js';
import { ChannelWaiters } from './core/waiters.js';
import type { ExpectationRegistry } from './governance/expectation-registry.js';
import { InboxCounters } from './governance/inbox-counters.js';
import { RateLimiter } from './governance/rate-limiter.js';
import { Lease } from './lease.js';
import { fencedKv } from './nats/fenced-kv.js';
import type { HubResources } from './nats/provision.js';
import { WalReader, WalWriter } from './nats/wal.js';
import type { ResolvedHubOptions } from './options.js';
import { SnapshotStore } from './snapshots/store.js';
import { TaskTable } from './tasks/task-table.js';

/** What a hub's context is built from: its options, its connection and the streams and buckets it provisioned. */
export interface HubParts {
  readonly opts: ResolvedHubOptions;
  readonly names: HubNames;
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
  readonly resources: HubResources;
  readonly issuer: CredentialsIssuer | null;
  /** Built before connecting, so that a bad evaluator or handler fails the start at once. */
  readonly expectations: ExpectationRegistry;
}

/**
 * The hub's context: every store it writes, each fenced by the lease (every record the hub keeps in KV is written
 * under the lease, as every WAL append is), and the policies it applies.
 */
export function buildHubContext(parts: HubParts): HubContext {
  const { opts, names, nc, jsm, resources, issuer, expectations } = parts;
  const js = jetstream(nc);
  const logger = opts.logger.child({ hubId: opts.hubId });
  const ids = createIdFactory();
  const serial = new KeyedSerial();
  const lease = new Lease({
    kv: resources.leases,
    jsm,
    names,
    holderId: opts.hubId,
    // Called only once the election runs, when `ctx` exists.
    onForeign: ({ key, revision }) => void quarantineLeaseValue(ctx, key, revision),
  });
  // Every record the hub keeps in KV is written under the lease, as every WAL append is.
  const mayWrite = (): boolean => lease.holds();
  const channels = new ChannelTable(fencedKv(resources.channels, mayWrite));
  const ctx: HubContext = {
    nc,
    js,
    jsm,
    names,
    resources,
    registry: new AgentRegistry(fencedKv(resources.agents, mayWrite)),
    channels,
    adapters: opts.adapters,
    clock: opts.clock,
    logger,
    ids,
    writer: new WalWriter(js, jsm, names),
    reader: new WalReader(js, jsm, names),
    serial,
    waiters: new ChannelWaiters(),
    inviteAckTimeoutMs: opts.inviteAckTimeoutMs,
    inboxAckWaitMs: opts.inboxAckWaitMs,
    retainClosedMs: opts.retainClosedMs,
    epoch: 0,
    deliveredThrough: 0,
    arbiter: opts.arbiter,
    expectations,
    inboxes: new InboxCounters(),
    rateLimiter: new RateLimiter(),
    audit: new AuditLog({ js, jsm, names, clock: opts.clock, ids, logger }),
    tasks: new TaskTable(fencedKv(resources.tasks, mayWrite)),
    lease,
    limits: opts.limits,
    counters: { quarantined: 0, deadLetters: 0, foreignWrites: 0 },
    quarantinedIds: new Set(),
    observer: opts.observer,
    snapshots: new SnapshotStore(resources.snapshots, { serial, channels, mayWrite, logger }),
    issuer,
    // A hub that issues credentials admits nobody unless its operator says who may register.
    authenticator: opts.authenticator ?? (issuer === null ? null : noAdmission()),
  };
  return ctx;
}
