import type { AdapterLookup, AdapterRegistry, HubAdapter } from '@ag2net/adapters';
import type { HubNames, IdFactory } from '@ag2net/protocol';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { AuditLog } from '../audit/audit-log.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { CredentialsIssuer } from '../auth/issuer.js';
import type { Clock } from '../clock.js';
import type { HubArbiter } from '../governance/arbiter.js';
import type { ExpectationRegistry } from '../governance/expectation-registry.js';
import type { InboxCounters } from '../governance/inbox-counters.js';
import type { ResolvedOperatorLimits } from '../governance/operator-limits.js';
import type { RateLimiter } from '../governance/rate-limiter.js';
import type { Logger } from '../logger.js';
import type { HubObserver } from '../observe/observer.js';
import type { HubResources } from '../nats/provision.js';
import type { WalReader, WalWriter } from '../nats/wal.js';
import type { Lease } from '../lease.js';
import type { SnapshotStore } from '../snapshots/store.js';
import type { KeyedSerial } from '@ag2net/protocol/internal';
import type { TaskTable } from '../tasks/task-table.js';
import type { ChannelTable } from './channel-table.js';
import type { AgentRegistry } from './registry.js';
import type { ChannelWaiters } from './waiters.js';

/** Everything the hub's operations share. Built once per hub; the parts that change with leadership are fields. */
export interface HubContext {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly names: HubNames;
  readonly resources: HubResources;
  readonly registry: AgentRegistry;
  readonly channels: ChannelTable;
  /** The hub's side of each channel protocol (the hub's `AdapterRegistry`, and how many it holds); the hub calls no other. */
  readonly adapters: AdapterLookup<HubAdapter> & Pick<AdapterRegistry, 'size'>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly ids: IdFactory;
  readonly writer: WalWriter;
  readonly reader: WalReader;
  /** Per-channel serialization of everything that appends to a channel's WAL. */
  readonly serial: KeyedSerial;
  readonly waiters: ChannelWaiters;
  /** How long invitees have to ack, in ms. */
  readonly inviteAckTimeoutMs: number;
  /** Ack wait of the agents' inbox consumers, in ms. */
  readonly inboxAckWaitMs: number;
  /** How long an ended channel's history is kept after it ended, in ms; `null`: forever (`HubOptions.retainClosedMs`). */
  readonly retainClosedMs: number | null;
  /** The writer's lease epoch, stamped into every WAL message. */
  epoch: number;
  /** Stream sequence up to which the delivery consumer has fanned the WAL out to inboxes. */
  deliveredThrough: number;
  /** The policy consulted at every send, delivery, channel open and new task. */
  readonly arbiter: HubArbiter;
  /** Expectation evaluators and violation handlers by name. */
  readonly expectations: ExpectationRegistry;
  /** AG2's per-agent inbox pending counts (folded from the WAL). */
  readonly inboxes: InboxCounters;
  /** Per-sender token buckets of `Rule.limits.rate`. */
  readonly rateLimiter: RateLimiter;
  readonly audit: AuditLog;
  readonly tasks: TaskTable;
  /** The single-writer lease this hub competes for and, while active, holds. */
  readonly lease: Lease;
  /** The operator's ceilings on agents' rules and the quotas of streams and buckets. */
  readonly limits: ResolvedOperatorLimits;
  /** Counts of what the hub refused to fold or deliver, since it started; reported by `health`. */
  readonly counters: HubCounters;
  /**
   * Audit ids of the quarantined records already counted in `counters.quarantined`, so that a record found by several
   * paths (hydrate, delivery, the writer's catch-up) counts once (see `auditQuarantined`).
   */
  readonly quarantinedIds: Set<string>;
  /** Told what the hub does, for metrics (`HubOptions.observer`). */
  readonly observer: HubObserver;
  /** Per-channel snapshots of folded state, from which hydrate starts and ended channels are served. */
  readonly snapshots: SnapshotStore;
  /** Issues identities their NATS credentials; `null` on a hub that issues none (NATS without auth). */
  readonly issuer: CredentialsIssuer | null;
  /** Who may register and attach; `null`: AG2's default (scheme `none`, `remote_agent` unchecked), unsecured only. */
  readonly authenticator: Authenticator | null;
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
