import type { HubNames } from '@ag2net/protocol';
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';

/** Where the hub keeps its state on NATS. */
export interface HubResources {
  readonly agents: KV;
  readonly channels: KV;
  readonly tasks: KV;
  readonly cursors: KV;
  readonly leases: KV;
}

/** Options of `provision`. */
export interface ProvisionOptions {
  /** Stream and bucket replicas; 1 for a single node, 3 for a production cluster. */
  readonly replicas: number;
  /** Lease bucket TTL in ms: a lease not renewed within it lapses. */
  readonly leaseTtlMs: number;
}

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
 * The WAL stream: one literal subject per channel, file storage, direct get, rollups, a 2-minute duplicate window.
 * Exported so that the benchmark's raw baseline stores its appends exactly as the hub does.
 */
export function walStreamConfig(names: StreamNames, replicas: number): Partial<StreamConfig> & { name: string } {
  return {
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

/** The inbox stream: a work queue, one durable consumer per agent, a 2-minute duplicate window. */
export function inboxStreamConfig(names: StreamNames, replicas: number): Partial<StreamConfig> & { name: string } {
  return {
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
  nc: NatsConnection,
  jsm: JetStreamManager,
  names: HubNames,
  options: ProvisionOptions,
): Promise<HubResources> {
  await ensureStream(jsm, walStreamConfig(names, options.replicas));
  await ensureStream(jsm, inboxStreamConfig(names, options.replicas));
  await ensureStream(jsm, {
    name: names.auditStream,
    subjects: [`${names.prefix}.audit.>`],
    storage: StorageType.File,
    num_replicas: options.replicas,
  });
  await ensureDeliveryConsumer(jsm, names);

  const kvm = new Kvm(nc);
  const bucket = (name: string, extra: { ttl?: number; history?: number } = {}): Promise<KV> =>
    kvm.create(name, {
      replicas: options.replicas,
      history: extra.history ?? 1,
      ...(extra.ttl ? { ttl: extra.ttl } : {}),
    });
  return {
    agents: await bucket(names.agentsBucket),
    channels: await bucket(names.channelsBucket),
    tasks: await bucket(names.tasksBucket),
    cursors: await bucket(names.cursorsBucket),
    leases: await bucket(names.leasesBucket, { ttl: options.leaseTtlMs }),
  };
}

async function ensureStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }): Promise<void> {
  let actual: StreamConfig;
  try {
    actual = (await jsm.streams.info(config.name)).config;
  } catch (err) {
    if (!(err instanceof JetStreamApiError) || err.code !== 10059) throw err;
    actual = (await jsm.streams.add(config)).config;
  }
  for (const key of ['allow_direct', 'allow_rollup_hdrs'] as const) {
    if (config[key] === true && actual[key] !== true) {
      throw new Error(`stream ${config.name} lacks ${key}: the server dropped it or the stream predates it`);
    }
  }
  const want = config.subjects ?? [];
  if (want.some((s) => !(actual.subjects ?? []).includes(s))) {
    throw new Error(
      `stream ${config.name} exists with subjects ${JSON.stringify(actual.subjects)}, expected ${JSON.stringify(want)}`,
    );
  }
}

async function ensureDeliveryConsumer(jsm: JetStreamManager, names: HubNames): Promise<void> {
  try {
    await jsm.consumers.info(names.walStream, names.deliveryConsumer);
  } catch (err) {
    if (!(err instanceof JetStreamApiError) || err.code !== 10014) throw err;
    await jsm.consumers.add(names.walStream, {
      durable_name: names.deliveryConsumer,
      filter_subject: names.walAll,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      // A fan-out takes milliseconds; after a failover, what the dead hub had pulled but not acked is redelivered
      // to the new one after ack_wait, so it is kept short. A redelivered fan-out is deduplicated by message id.
      ack_wait: DELIVERY_ACK_WAIT_MS * NS_PER_MS,
      max_ack_pending: 2_000,
      max_deliver: -1,
    });
  }
}

/** Creates the durable consumer of an agent's inbox (idempotent). */
export async function ensureInboxConsumer(
  jsm: JetStreamManager,
  names: HubNames,
  agentId: string,
  ackWaitMs: number,
): Promise<void> {
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
