import type { AdapterLookup, AdapterRegistry, HubAdapter } from '@ag2net/adapters';
import type { HubNames, IdFactory } from '@ag2net/protocol';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { AuditLog } from '../audit/audit-log.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { CredentialsIssuer } from '../auth/issuer.js';
import type { Clock } from '../base/clock.js';
import type { AgentRegistry } from '../stores/registry.js';
import type { HubArbiter } from '../governance/arbiter.js';
import type { ExpectationRegistry } from '../governance/expectation-registry.js';
import type { InboxCounters } from '../governance/inbox-counters.js';
import type { ResolvedOperatorLimits } from '../governance/operator-limits.js';
import type { RateLimiter } from '../governance/rate-limiter.js';
import type { Logger } from '../base/logger.js';
import type { Outbox } from '../nats/outbox.js';
import type { HubResources } from '../nats/provision.js';
import type { HubObserver } from '../observe/observer.js';
import type { TaskTable } from '../stores/task-table.js';
import type { ChannelIndex } from '../stores/channel-index.js';
import type { TaskEnds } from '../stores/task-ends.js';

/*
 * The hub's parts besides its partitions (see `Partition`), in three groups, each one per hub. A function declares
 * the fields it uses as `Pick`s of these and a `PartitionPick`; only the hub holds them all.
 */

/** What the hub runs in: its connection and names, its streams and buckets, its clock, log, ids, counts and settings. */
export interface HubEnv {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  /** The hub's outbound messages on `nc`, sent together once per turn of the event loop: WAL appends and deliveries. */
  readonly outbox: Outbox;
  readonly jsm: JetStreamManager;
  readonly names: HubNames;
  readonly resources: HubResources;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly ids: IdFactory;
  /** Told what the hub does, for metrics (`HubOptions.observer`). */
  readonly observer: HubObserver;
  /** Counts of what the hub refused to fold or deliver, since it started; reported by `health`. */
  readonly counters: HubCounters;
  /**
   * Audit ids of the quarantined records already counted in `counters.quarantined`, so that a record found by several
   * paths (hydrate, delivery, the writer's catch-up) counts once (see `auditQuarantined`).
   */
  readonly quarantinedIds: Set<string>;
  /** The hub's side of each channel protocol (the hub's `AdapterRegistry`, and how many it holds); the hub calls no other. */
  readonly adapters: AdapterLookup<HubAdapter> & Pick<AdapterRegistry, 'size'>;
  /** How long invitees have to ack, in ms. */
  readonly inviteAckTimeoutMs: number;
  /** Ack wait of the agents' inbox consumers, in ms. */
  readonly inboxAckWaitMs: number;
  /** How long an ended channel's history is kept after it ended, in ms; `null`: forever (`HubOptions.retainClosedMs`). */
  readonly retainClosedMs: number | null;
  /** The operator's ceilings on agents' rules and the quotas of streams and buckets. */
  readonly limits: ResolvedOperatorLimits;
}

/** Counters the hub reports in `health` (and, later, as metrics). */
export interface HubCounters {
  /** WAL messages and KV records skipped because they were not what the hub writes, each once (hydrate, delivery, catch-up). */
  quarantined: number;
  /** Deliveries given up after their retries and parked in the audit trail. */
  deadLetters: number;
  /** WAL entries appended under another lease epoch that the writer found after its last known entry and folded. */
  foreignWrites: number;
}

/**
 * The records that belong to no single channel: agents, tasks, the audit trail, and who may have credentials. Their
 * KV stores are written under the lease, as every WAL append is.
 */
export interface HomeStores {
  readonly registry: AgentRegistry;
  readonly tasks: TaskTable;
  readonly audit: AuditLog;
  /** Issues identities their NATS credentials; `null` on a hub that issues none (NATS without auth). */
  readonly issuer: CredentialsIssuer | null;
  /** Who may register and attach; `null`: AG2's default (scheme `none`, `remote_agent` unchecked), unsecured only. */
  readonly authenticator: Authenticator | null;
  /**
   * Every channel of a partitioned deployment, as far as the channels bucket tells (`HomeReplica` feeds it): what
   * operations about channels of other partitions read. Empty with one partition.
   */
  readonly channelIndex: ChannelIndex;
  /** Task ends other partitions left for the home partition's owner (`TaskEnds`); unused with one partition. */
  readonly taskEnds: TaskEnds;
}

/** The policies the hub applies to what agents send, and the state they keep. */
export interface HubPolicies {
  /** The policy consulted at every send, delivery, channel open and new task. */
  readonly arbiter: HubArbiter;
  /** Expectation evaluators and violation handlers by name. */
  readonly expectations: ExpectationRegistry;
  /** AG2's per-agent inbox pending counts (folded from the WAL). */
  readonly inboxes: InboxCounters;
  /** Per-sender token buckets of `Rule.limits.rate`. */
  readonly rateLimiter: RateLimiter;
}
