import { createIdFactory, type HubNames } from '@ag2net/protocol';
import { jetstream, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { AuditLog } from './audit/audit-log.js';
import { noAdmission } from './auth/authenticator.js';
import type { CredentialsIssuer } from './auth/issuer.js';
import { quarantineLeaseValue } from './operations/quarantine.js';
import { AgentRegistry } from './stores/registry.js';
import type { ExpectationRegistry } from './governance/expectation-registry.js';
import { InboxCounters } from './governance/inbox-counters.js';
import { RateLimiter } from './governance/rate-limiter.js';
import type { HomeStores, HubEnv, HubPolicies } from './partition/hub-parts.js';
import { fencedKv } from './nats/fenced-kv.js';
import type { HubResources } from './nats/provision.js';
import type { ResolvedHubOptions } from './options.js';
import { Partition } from './partition/partition.js';
import { TaskTable } from './stores/task-table.js';

/** What a hub is assembled from: its options, its connection and the streams and buckets it provisioned. */
export interface HubMaterials {
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
 * All of a hub's parts in one object, which satisfies the narrow type of every function the hub calls: its
 * environment, home stores and policies, and its one partition. Only the hub holds it; every other module declares
 * the fields it uses.
 */
export type AssembledHub = HubEnv & HomeStores & HubPolicies & { readonly partition: Partition };

/**
 * Builds a hub's parts: every store it writes, each fenced by the partition's lease (every record the hub keeps in KV
 * is written under the lease, as every WAL append is), and the policies it applies. No I/O.
 */
export function assembleHub(materials: HubMaterials): AssembledHub {
  const { opts, names, nc, jsm, resources, issuer, expectations } = materials;
  const js = jetstream(nc);
  const logger = opts.logger.child({ hubId: opts.hubId });
  const ids = createIdFactory();
  const partition = new Partition({
    js,
    jsm,
    names,
    resources,
    holderId: opts.hubId,
    logger,
    // Called only once the election runs, when `hub` exists.
    onForeign: ({ key, revision }) => void quarantineLeaseValue(hub, key, revision),
  });
  const env: HubEnv = {
    nc,
    js,
    jsm,
    names,
    resources,
    clock: opts.clock,
    logger,
    ids,
    observer: opts.observer,
    counters: { quarantined: 0, deadLetters: 0, foreignWrites: 0 },
    quarantinedIds: new Set(),
    adapters: opts.adapters,
    inviteAckTimeoutMs: opts.inviteAckTimeoutMs,
    inboxAckWaitMs: opts.inboxAckWaitMs,
    retainClosedMs: opts.retainClosedMs,
    limits: opts.limits,
  };
  const stores: HomeStores = {
    registry: new AgentRegistry(fencedKv(resources.agents, partition.mayWrite)),
    tasks: new TaskTable(fencedKv(resources.tasks, partition.mayWrite)),
    audit: new AuditLog({ js, jsm, names, clock: opts.clock, ids, logger }),
    issuer,
    // A hub that issues credentials admits nobody unless its operator says who may register.
    authenticator: opts.authenticator ?? (issuer === null ? null : noAdmission()),
  };
  const policies: HubPolicies = {
    arbiter: opts.arbiter,
    expectations,
    inboxes: new InboxCounters(),
    rateLimiter: new RateLimiter(),
  };
  const hub: AssembledHub = { ...env, ...stores, ...policies, partition };
  return hub;
}
