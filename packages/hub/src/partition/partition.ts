import type { HubNames } from '@ag2net/protocol';
import { KeyedSerial } from '@ag2net/protocol/internal';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { ChannelTable } from '../stores/channel-table.js';
import { ChannelWaiters } from './waiters.js';
import { InboxCounters } from '../governance/inbox-counters.js';
import { Lease, type LeaseOptions } from '../lease/lease.js';
import type { Logger } from '../base/logger.js';
import { fencedKv } from '../nats/fenced-kv.js';
import type { Outbox } from '../nats/outbox.js';
import type { HubResources } from '../nats/provision.js';
import { WalReader, WalWriter } from '../nats/wal.js';
import { SnapshotStore } from '../stores/snapshot-store.js';

/** What a partition is built from. Building one does no I/O. */
export interface PartitionOptions {
  /** Which partition of the deployment this is, 0 to `names.partitions - 1`. */
  readonly index: number;
  readonly js: JetStreamClient;
  /** The hub's outbound messages, through which the WAL is appended to. */
  readonly outbox: Outbox;
  readonly jsm: JetStreamManager;
  /** The deployment's names (`partitionNames` makes this partition's from them). */
  readonly names: HubNames;
  /** The buckets of its lease, its channels' metadata and their snapshots. */
  readonly resources: Pick<HubResources, 'leases' | 'channels' | 'snapshots'>;
  /** This hub's id, the value its lease record holds. */
  readonly holderId: string;
  readonly logger: Logger;
  /** Told of each value at the lease key that no hub wrote (`LeaseOptions.onForeign`). */
  readonly onForeign: NonNullable<LeaseOptions['onForeign']>;
}

/**
 * A share of the hub's channels and everything that writes them: the lease the share is held under, the WAL writer
 * and reader, the per-channel serial slots, the waiters of its channels, the channel table, the snapshots, and the
 * two values of the lease's current term (`epoch`, `deliveredThrough`). A hub has one partition today, holding every
 * channel; the hub's other parts (`HubEnv`, `HomeStores`, `HubPolicies`) are shared by all its partitions.
 *
 * Everything the partition writes is fenced by its lease: a WAL append carries `epoch` and is refused unless
 * `mayWrite()`, and its KV stores (channel metadata, snapshots) refuse every write unless `mayWrite()`.
 */
export class Partition {
  /** Which partition of the deployment this is. */
  readonly index: number;
  /** The names as this partition sees them (`partitionNames`): its WAL subjects and its delivery consumer. */
  readonly names: HubNames;
  /** The lease this partition is held under; its revision at acquisition is `epoch`. */
  readonly lease: Lease;
  readonly writer: WalWriter;
  readonly reader: WalReader;
  /** Per-channel serialization of everything that appends to a channel's WAL. */
  readonly serial = new KeyedSerial();
  readonly waiters = new ChannelWaiters();
  /** AG2's per-agent inbox pending counts, folded from this partition's WAL. */
  readonly inboxes = new InboxCounters();
  readonly channels: ChannelTable;
  /** Per-channel snapshots of folded state, from which hydrate starts and ended channels are served. */
  readonly snapshots: SnapshotStore;
  /** The epoch of the lease's current term, stamped into every WAL message; set when a term starts. */
  epoch = 0;
  /** Stream sequence up to which the delivery consumer has fanned the WAL out to inboxes. */
  deliveredThrough = 0;

  /** Whether this partition may write now: while it holds its lease. Every store it writes checks it first. */
  readonly mayWrite = (): boolean => this.lease.holds();

  /** Whether channel `channelId` belongs to this partition. */
  owns(channelId: string): boolean {
    return this.names.partitionOf(channelId) === this.index;
  }

  constructor(options: PartitionOptions) {
    const { js, jsm, resources, logger, index } = options;
    this.index = index;
    const names = partitionNames(options.names, index);
    this.names = names;
    this.lease = new Lease({
      kv: resources.leases,
      jsm,
      names,
      holderId: options.holderId,
      key: names.leaseKey(index),
      onForeign: options.onForeign,
    });
    this.writer = new WalWriter(options.outbox, jsm, { names });
    this.reader = new WalReader(js, jsm, names);
    this.channels = new ChannelTable(fencedKv(resources.channels, this.mayWrite));
    this.snapshots = new SnapshotStore(resources.snapshots, {
      serial: this.serial,
      channels: this.channels,
      mayWrite: this.mayWrite,
      logger,
    });
  }
}

/**
 * The deployment's names as partition `index` sees them: `walAll` is its own WAL subjects (`walOf(index)`) and
 * `deliveryConsumer` its own consumer (`deliveryConsumerOf(index)`), so that whatever reads "the WAL" or "the delivery
 * consumer" through a partition's names reads that partition's. With one partition, the names themselves.
 */
export function partitionNames(names: HubNames, index: number): HubNames {
  if (names.partitions === 1) return names;
  return { ...names, walAll: names.walOf(index), deliveryConsumer: names.deliveryConsumerOf(index) };
}

/**
 * The fields `K` of the partition a function works in, as `partition`: how a function declares which of the
 * partition's parts it uses (with `Pick`s of `HubEnv`, `HomeStores` and `HubPolicies` for the rest).
 */
export interface PartitionPick<K extends keyof Partition> {
  readonly partition: Pick<Partition, K>;
}
