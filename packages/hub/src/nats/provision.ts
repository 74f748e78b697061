import { Ag2netError, ErrorCode, type HubNames } from '@ag2net/protocol';
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  jetstream,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  DEFAULT_OPERATOR_LIMITS,
  type OperatorLimits,
  type ResolvedOperatorLimits,
} from '../governance/operator-limits.js';

/** The longest TTL `acquireTurnLock` accepts (its `ttl_ms` schema), in ms. */
export const TURN_LOCK_MAX_TTL_MS = 120_000;

/**
 * The turn-lock bucket's `max_age`, in ms: it only collects keys nobody renews any more (released or lapsed locks of
 * idle channels). Twice the longest lock TTL, so that the server never removes a lock that is still alive, whatever
 * small difference there is between the hub's clock and the server's.
 */
export const TURN_LOCK_BUCKET_TTL_MS = 2 * TURN_LOCK_MAX_TTL_MS;

/** Where the hub keeps its state on NATS. */
export interface HubResources {
  readonly agents: KV;
  readonly channels: KV;
  readonly tasks: KV;
  readonly cursors: KV;
  readonly leases: KV;
  /** Per-channel snapshots of folded state, one key per channel; see `SnapshotStore`. */
  readonly snapshots: KV;
  /** Turn locks, one key per (agent, channel); see `TurnLockTable`. */
  readonly turnLocks: KV;
}

/** Options of `provision`. */
export interface ProvisionOptions {
  /** Stream and bucket replicas; 1 for a single node, 3 for a production cluster. */
  readonly replicas: number;
  /** Lease bucket TTL in ms: a lease not renewed within it lapses. */
  readonly leaseTtlMs: number;
  /** Quotas (`maxMessageBytes`, `streamMaxBytes`, `bucketMaxBytes`, `inboxMaxMessages`); default the defaults. */
  readonly limits?: ResolvedOperatorLimits;
}

/** The quotas a stream config takes from the operator's limits. */
export type StreamQuotas = Pick<Required<OperatorLimits>, 'maxMessageBytes' | 'streamMaxBytes' | 'inboxMaxMessages'>;

const NS_PER_MS = 1_000_000;

/** How long the delivery consumer waits for a fan-out's ack before redelivering it, in ms. */
export const DELIVERY_ACK_WAIT_MS = 3_000;

/** The names a WAL or inbox stream config needs: its stream name and the subjects it captures. */
export interface StreamNames {
  readonly walStream: string;
  readonly walAll: string;
  readonly inboxStream: string;
  readonly inboxAll: string;
}

/**
 * The WAL stream: one literal subject per channel, file storage, direct get, rollups, a 2-minute duplicate window,
 * the operator's message-size and byte quotas. Exported so that the benchmark's raw baseline stores its appends
 * exactly as the hub does.
 */
export function walStreamConfig(
  names: StreamNames,
  replicas: number,
  quotas: StreamQuotas = DEFAULT_OPERATOR_LIMITS,
): Partial<StreamConfig> & { name: string } {
  return {
    max_msg_size: quotas.maxMessageBytes,
    max_bytes: quotas.streamMaxBytes,
    name: names.walStream,
    subjects: [names.walAll],
    storage: StorageType.File,
    num_replicas: replicas,
    retention: RetentionPolicy.Limits,
    allow_direct: true,
    allow_rollup_hdrs: true,
    duplicate_window: 120_000 * NS_PER_MS,
  };
}

/**
 * The inbox stream: a work queue, one durable consumer per agent, a 2-minute duplicate window, and a hard cap of
 * `inboxMaxMessages` per agent that refuses new messages rather than dropping old ones (`discard_new_per_subject`):
 * nothing queued for an agent is ever lost to the cap, and a delivery it refuses is retried, then dead-lettered.
 */
export function inboxStreamConfig(
  names: StreamNames,
  replicas: number,
  quotas: StreamQuotas = DEFAULT_OPERATOR_LIMITS,
): Partial<StreamConfig> & { name: string } {
  return {
    max_msg_size: quotas.maxMessageBytes,
    max_bytes: quotas.streamMaxBytes,
    max_msgs_per_subject: quotas.inboxMaxMessages,
    discard: DiscardPolicy.New,
    discard_new_per_subject: true,
    name: names.inboxStream,
    subjects: [names.inboxAll],
    storage: StorageType.File,
    num_replicas: replicas,
    retention: RetentionPolicy.Workqueue,
    duplicate_window: 120_000 * NS_PER_MS,
  };
}

/**
 * Creates, or checks, every stream, bucket and consumer of one hub. Idempotent. nats-server 2.9 silently drops
 * settings it does not know, so each created stream's returned config is checked for the settings we rely on.
 */
export async function provision(
  where: { readonly nc: NatsConnection; readonly jsm: JetStreamManager; readonly names: HubNames },
  options: ProvisionOptions,
): Promise<HubResources> {
  const { nc, jsm, names } = where;
  const limits = options.limits ?? DEFAULT_OPERATOR_LIMITS;
  await ensureStream(jsm, walStreamConfig(names, options.replicas, limits));
  await ensureStream(jsm, inboxStreamConfig(names, options.replicas, limits));
  await ensureStream(jsm, {
    name: names.auditStream,
    subjects: [`${names.prefix}.audit.>`],
    storage: StorageType.File,
    num_replicas: options.replicas,
    max_msg_size: limits.maxMessageBytes,
    max_bytes: limits.streamMaxBytes,
  });
  await ensureDeliveryConsumers(jsm, names);

  const kvm = new Kvm(nc);
  const bucket = (name: string, extra: { ttl?: number; history?: number } = {}, via = kvm): Promise<KV> =>
    via.create(name, {
      replicas: options.replicas,
      history: extra.history ?? 1,
      max_bytes: limits.bucketMaxBytes,
      maxValueSize: limits.maxMessageBytes,
      ...(extra.ttl ? { ttl: extra.ttl } : {}),
    });
  return {
    agents: await bucket(names.agentsBucket),
    channels: await bucket(names.channelsBucket),
    tasks: await bucket(names.tasksBucket),
    cursors: await bucket(names.cursorsBucket),
    snapshots: await bucket(names.snapshotsBucket),
    // Lease requests time out well within a renewal period, so that a renewal lost in a short NATS outage is sent
    // again while the lease is still valid instead of waiting out the default 5 s request timeout.
    leases: await bucket(
      names.leasesBucket,
      { ttl: options.leaseTtlMs },
      new Kvm(jetstream(nc, { timeout: leaseRequestTimeoutMs(options.leaseTtlMs) })),
    ),
    turnLocks: await bucket(names.turnLocksBucket, { ttl: TURN_LOCK_BUCKET_TTL_MS }),
  };
}

/** How long one lease request may take, ms: a sixth of the lease time, between 250 ms and 2 s. */
export function leaseRequestTimeoutMs(leaseTtlMs: number): number {
  return Math.min(2000, Math.max(250, Math.floor(leaseTtlMs / 6)));
}

/** The quota settings of a stream config, which an existing stream is updated to when they differ. */
const QUOTA_KEYS = ['max_msg_size', 'max_bytes', 'max_msgs_per_subject', 'discard', 'discard_new_per_subject'] as const;

async function ensureStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }): Promise<void> {
  let actual: StreamConfig;
  try {
    actual = (await jsm.streams.info(config.name)).config;
  } catch (err) {
    if (!(err instanceof JetStreamApiError) || err.code !== 10059) throw err;
    actual = (await jsm.streams.add(config)).config;
  }
  // The operator may change quotas between starts (and a stream may predate them): bring the stream up to date.
  if (QUOTA_KEYS.some((key) => config[key] !== undefined && actual[key] !== config[key])) {
    const quotas = Object.fromEntries(
      QUOTA_KEYS.flatMap((key) => (config[key] === undefined ? [] : [[key, config[key]]])),
    );
    actual = (await jsm.streams.update(config.name, { ...actual, ...quotas })).config;
  }
  for (const key of ['allow_direct', 'allow_rollup_hdrs', 'discard_new_per_subject'] as const) {
    if (config[key] === true && actual[key] !== true) {
      throw new Error(`stream ${config.name} lacks ${key}: the server dropped it or the stream predates it`);
    }
  }
  // A quota the server dropped would leave the stream unbounded.
  for (const key of ['max_msg_size', 'max_bytes', 'max_msgs_per_subject'] as const) {
    const want = config[key];
    if (want !== undefined && want > 0 && actual[key] !== want) {
      throw new Error(`stream ${config.name} has ${key} ${String(actual[key])}, expected ${want}`);
    }
  }
  const want = config.subjects ?? [];
  if (want.some((s) => !(actual.subjects ?? []).includes(s))) {
    throw new Error(
      `stream ${config.name} exists with subjects ${JSON.stringify(actual.subjects)}, expected ${JSON.stringify(want)}`,
    );
  }
}

/**
 * Creates, or checks, the delivery consumers: one per partition (`deliveryConsumerOf`), each over its partition's WAL
 * subjects. They also record how many partitions the prefix was provisioned with: a hub configured with another count
 * than the consumers on the WAL stream say is refused, since it would put channels in other partitions than the
 * hubs already serving them. (Each consumer is looked up by name: the hub may not list a stream's consumers.)
 */
async function ensureDeliveryConsumers(jsm: JetStreamManager, names: HubNames): Promise<void> {
  const wanted = Array.from({ length: names.partitions }, (_, k) => names.deliveryConsumerOf(k));
  // The consumers of the other counts a prefix may have: one partition's, or one more than this count has.
  const others =
    names.partitions === 1
      ? ['hub_delivery_0', 'hub_delivery_1']
      : ['hub_delivery', `hub_delivery_${names.partitions}`];
  const present = async (durable: string): Promise<boolean> => {
    try {
      await jsm.consumers.info(names.walStream, durable);
      return true;
    } catch (err) {
      if (err instanceof JetStreamApiError && err.code === 10014) return false;
      throw err;
    }
  };
  const look = async (): Promise<{ found: boolean[]; foreign: string[] }> => {
    const [found, foreign] = await Promise.all([Promise.all(wanted.map(present)), Promise.all(others.map(present))]);
    return { found, foreign: others.filter((_, i) => foreign[i] === true) };
  };
  const check = async (): Promise<boolean[]> => {
    // Some of this count's consumers but not all: another hub may be creating them right now (it creates them in
    // order), or the prefix has fewer partitions. The first completes within moments; the second never does.
    let seen = await look();
    for (let waited = 0; !seen.found.every(Boolean) && seen.found.some(Boolean) && waited < PARTIAL_WAIT_MS;) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      waited += 100;
      seen = await look();
    }
    const { found, foreign } = seen;
    if (foreign.length > 0 || (found.some(Boolean) && !found.every(Boolean))) {
      throw partitionCountMismatch(names, [...wanted.filter((_, i) => found[i] === true), ...foreign]);
    }
    return found;
  };
  const found = await check();
  for (const [k, durable] of wanted.entries()) {
    if (found[k] === true) continue;
    await jsm.consumers.add(names.walStream, {
      durable_name: durable,
      filter_subject: names.walOf(k),
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      // A fan-out takes milliseconds; after a failover, what the dead hub had pulled but not acked is redelivered
      // to the new one after ack_wait, so it is kept short. A redelivered fan-out is deduplicated by message id.
      ack_wait: DELIVERY_ACK_WAIT_MS * NS_PER_MS,
      max_ack_pending: 2_000,
      max_deliver: -1,
    });
  }
  // Two hubs provisioning a new prefix with different counts at once: the second to look sees the first's consumers.
  await check();
}

/** How long a hub waits for another hub to finish creating the delivery consumers of a new prefix, ms. */
const PARTIAL_WAIT_MS = 3_000;

/** A hub started with another partition count than its prefix was provisioned with. Code `invalid_config`. */
export class PartitionCountError extends Ag2netError {
  override readonly name = 'PartitionCountError';
  constructor(message: string) {
    super(ErrorCode.InvalidConfig, message);
  }
}

function partitionCountMismatch(names: HubNames, found: readonly string[]): PartitionCountError {
  return new PartitionCountError(
    `prefix ${names.prefix} was provisioned with another partition count than ${names.partitions} ` +
      `(delivery consumers found: ${found.join(', ')}); start every hub with the count it was provisioned with`,
  );
}

/** Creates the durable consumer of an agent's inbox (idempotent). */
export async function ensureInboxConsumer(
  jsm: JetStreamManager,
  names: HubNames,
  inbox: { readonly agentId: string; readonly ackWaitMs: number },
): Promise<void> {
  const { agentId, ackWaitMs } = inbox;
  await jsm.consumers.add(names.inboxStream, {
    durable_name: names.inboxConsumer(agentId),
    filter_subject: names.inbox(agentId),
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: ackWaitMs * NS_PER_MS,
    max_ack_pending: 1000,
    max_deliver: -1,
  });
}

/** Removes an agent's inbox consumer and what is queued for it. */
export async function removeInbox(jsm: JetStreamManager, names: HubNames, agentId: string): Promise<void> {
  try {
    await jsm.consumers.delete(names.inboxStream, names.inboxConsumer(agentId));
  } catch (err) {
    if (!(err instanceof JetStreamApiError) || err.code !== 10014) throw err;
  }
  await jsm.streams.purge(names.inboxStream, { filter: names.inbox(agentId) });
}
