import { createIdFactory, type HubNames } from '@ag2net/protocol';
import type { Logger } from './base/logger.js';
import { jetstream, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { AuditLog } from './audit/audit-log.js';
import { noAdmission } from './auth/authenticator.js';
import type { CredentialsIssuer } from './auth/issuer.js';
import { quarantineLeaseValue } from './operations/quarantine.js';
import { AgentRegistry } from './stores/registry.js';
import type { ExpectationRegistry } from './governance/expectation-registry.js';
import { RateLimiter } from './governance/rate-limiter.js';
import type { HomeStores, HubEnv, HubPolicies } from './partition/hub-parts.js';
import { fencedKv } from './nats/fenced-kv.js';
import { Outbox, inboxPrefixOf } from './nats/outbox.js';
import type { HubResources } from './nats/provision.js';
import type { ResolvedHubOptions } from './options.js';
import { Partition } from './partition/partition.js';
import { TaskTable } from './stores/task-table.js';
import { ChannelIndex } from './stores/channel-index.js';
import { TaskEnds } from './stores/task-ends.js';

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
 * A hub's parts as one partition sees them, in one object, which satisfies the narrow type of every function the hub
 * calls for that partition: the hub's environment (with the partition's names: its WAL subjects and delivery
 * consumer), home stores and policies (with the partition's inbox counts), and the partition. Only the hub holds
 * them; every other module declares the fields it uses.
 */
export type PartitionView = HubEnv & HomeStores & HubPolicies & { readonly partition: Partition };

/**
 * All of a hub's parts: one view per partition of the deployment (`views[k]` is partition `k`'s), and the
 * deployment's names. The home stores (agents, tasks) are written under partition 0's lease.
 */
export interface AssembledHub {
  readonly views: readonly PartitionView[];
  /** The deployment's names (every partition's subjects). */
  readonly names: HubNames;
  /** Partition 0's view: the home partition, and every channel of a deployment with one partition. */
  readonly home: PartitionView;
  /** The hub's own log (its lines name no partition). */
  readonly logger: Logger;
}

/**
 * Builds a hub's parts: every store it writes, each fenced by the partition's lease (every record the hub keeps in KV
 * is written under the lease, as every WAL append is), and the policies it applies. No I/O.
 */
export function assembleHub(materials: HubMaterials): AssembledHub {
  const { opts, names, nc, jsm, resources, issuer, expectations } = materials;
  const js = jetstream(nc);
  const outbox = new Outbox(nc, inboxPrefixOf(jsm));
  const logger = opts.logger.child({ hubId: opts.hubId });
  const ids = createIdFactory();
  const partitions = Array.from(
    { length: names.partitions },
    (_, index) =>
      new Partition({
        index,
        js,
        outbox,
        jsm,
        names,
        resources,
        holderId: opts.hubId,
        logger: names.partitions === 1 ? logger : logger.child({ partition: index }),
        // Called only once the election runs, when the views exist.
        onForeign: ({ key, revision }) => {
          const view = views[index];
          if (view !== undefined) void quarantineLeaseValue(view, key, revision);
        },
      }),
  );
  const [first] = partitions;
  if (first === undefined) throw new RangeError('a hub has at least one partition');
  const env: HubEnv = {
    nc,
    js,
    outbox,
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
    registry: new AgentRegistry(fencedKv(resources.agents, first.mayWrite)),
    tasks: new TaskTable(fencedKv(resources.tasks, first.mayWrite), names.partitions > 1),
    audit: new AuditLog({ js, jsm, names, clock: opts.clock, ids, logger }),
    issuer,
    // A hub that issues credentials admits nobody unless its operator says who may register.
    authenticator: opts.authenticator ?? (issuer === null ? null : noAdmission()),
    channelIndex: new ChannelIndex(),
    taskEnds: new TaskEnds(resources.tasks),
  };
  const policies: HubPolicies = {
    arbiter: opts.arbiter,
    expectations,
    inboxes: first.inboxes,
    rateLimiter: new RateLimiter(),
  };
  const views: PartitionView[] = partitions.map((partition) => ({
    ...env,
    ...stores,
    ...policies,
    names: partition.names,
    logger: names.partitions === 1 ? logger : logger.child({ partition: partition.index }),
    inboxes: partition.inboxes,
    partition,
  }));
  const [home] = views;
  if (home === undefined) throw new RangeError('a hub has at least one partition');
  return { views, names, home, logger };
}
