import { z } from 'zod';
import { partitionOf } from './partitions.js';

/** The namespace of one hub on a NATS deployment; several hubs (tenants) can share one NATS with different prefixes. */
export const PrefixSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,32}$/, 'prefix may hold only letters, digits, "_" and "-" (at most 32)');

/** The default prefix. */
export const DEFAULT_PREFIX = 'ag2';

/** The RPC protocol version in subjects. */
export const RPC_VERSION = 'v1';

/**
 * Subject and resource names of one hub. Streams and buckets are named `<PREFIX>_…` (NATS names cannot hold dots);
 * subjects are `<prefix>.…`.
 */
export interface HubNames {
  readonly prefix: string;
  /** How many partitions the deployment's channels are spread over (1: one partition, today's subjects). */
  readonly partitions: number;
  /** The partition of a channel: `partitionOf(channelId, partitions)`. */
  partitionOf(channelId: string): number;
  /**
   * `<prefix>.hub.v1.<op>` or, for operations with a caller, `<prefix>.hub.v1.<op>.<caller_id>`: the home
   * partition's operations, and every operation of a deployment with one partition.
   */
  rpc(op: string, callerId?: string): string;
  /** The subject a hub subscribes to for an operation (`….<op>` or `….<op>.*`). */
  rpcListen(op: string, withCaller: boolean): string;
  /**
   * `<prefix>.hub.v1.<op>.<partition>.<caller_id>`: an operation about the channels of one partition, sent to that
   * partition's owner. With one partition, the same as `rpc(op, callerId)`.
   */
  rpcIn(op: string, partition: number, callerId: string): string;
  /** The subject a partition's owner subscribes to for one of its operations (`….<op>.<partition>.*`). */
  rpcListenIn(op: string, partition: number): string;
  /**
   * A channel's WAL subject: `<prefix>.wal.<channel_id>` with one partition, `<prefix>.wal.<partition>.<channel_id>`
   * with more, so that each partition's delivery consumer filters its own channels.
   */
  wal(channelId: string): string;
  /** Every WAL subject of one partition (`<prefix>.wal.>` with one partition). */
  walOf(partition: number): string;
  readonly walAll: string;
  readonly walStream: string;
  /** `<prefix>.agent.<agent_id>.inbox`: an agent's durable deliveries. */
  inbox(agentId: string): string;
  readonly inboxAll: string;
  readonly inboxStream: string;
  /** The durable consumer of an agent's inbox. */
  inboxConsumer(agentId: string): string;
  readonly auditStream: string;
  audit(kind: string): string;
  readonly agentsBucket: string;
  readonly channelsBucket: string;
  readonly tasksBucket: string;
  readonly leasesBucket: string;
  readonly cursorsBucket: string;
  /** Per-channel snapshots of the hub's folded state (adapter state, indexes), keyed by channel id. */
  readonly snapshotsBucket: string;
  /** The hub's turn locks, one key per (agent, channel); only the hub writes it (`acquireTurnLock` and its kin). */
  readonly turnLocksBucket: string;
  /** Every KV bucket above. */
  readonly buckets: readonly string[];
  /** The hub's durable consumer over the WAL that fans admitted envelopes out to inboxes (partition 0's). */
  readonly deliveryConsumer: string;
  /** The delivery consumer of one partition: `hub_delivery`, or `hub_delivery_<partition>` with several partitions. */
  deliveryConsumerOf(partition: number): string;
  /** A partition's lease key in the leases bucket: `active`, or `active.<partition>` with several partitions. */
  leaseKey(partition: number): string;
  /**
   * `<prefix>.hubs.v1.ping`: the hub roster. Every hub of the prefix, active or standby, answers a request here with
   * its own `Health` (no queue group), so that one request collects the whole roster.
   */
  readonly hubsPing: string;
  /**
   * `<prefix>.hubs.v1.alive.<hub_id>`: a hub's presence. Each hub subscribes to its own from the start of its election
   * to its close and never answers, so that a request there times out while the hub is connected and gets "no
   * responders" from the server once its connection is gone: how a standby sees the active hub's death before its
   * lease expires. Only hubs may publish or subscribe here.
   */
  hubAlive(hubId: string): string;
  /** Every hub's presence subject (`<prefix>.hubs.v1.alive.*`), for permissions. */
  readonly hubAliveAll: string;
}

/** The names of the hub with `prefix`, whose channels are spread over `partitions` partitions (default 1). */
export function hubNames(prefix: string = DEFAULT_PREFIX, partitions = 1): HubNames {
  const p = PrefixSchema.parse(prefix);
  const P = p.toUpperCase();
  partitionOf('', partitions); // checks the count
  const one = partitions === 1;
  const rpc = (op: string, callerId?: string): string =>
    callerId === undefined ? `${p}.hub.${RPC_VERSION}.${op}` : `${p}.hub.${RPC_VERSION}.${op}.${callerId}`;
  return {
    prefix: p,
    partitions,
    partitionOf: (channelId) => partitionOf(channelId, partitions),
    rpc,
    rpcListen: (op, withCaller) => `${p}.hub.${RPC_VERSION}.${op}${withCaller ? '.*' : ''}`,
    rpcIn: (op, partition, callerId) =>
      one ? rpc(op, callerId) : `${p}.hub.${RPC_VERSION}.${op}.${partition}.${callerId}`,
    rpcListenIn: (op, partition) =>
      one ? `${p}.hub.${RPC_VERSION}.${op}.*` : `${p}.hub.${RPC_VERSION}.${op}.${partition}.*`,
    wal: (channelId) => (one ? `${p}.wal.${channelId}` : `${p}.wal.${partitionOf(channelId, partitions)}.${channelId}`),
    walOf: (partition) => (one ? `${p}.wal.>` : `${p}.wal.${partition}.>`),
    walAll: `${p}.wal.>`,
    walStream: `${P}_WAL`,
    inbox: (agentId) => `${p}.agent.${agentId}.inbox`,
    inboxAll: `${p}.agent.*.inbox`,
    inboxStream: `${P}_INBOX`,
    inboxConsumer: (agentId) => `agent_${agentId}`,
    auditStream: `${P}_AUDIT`,
    audit: (kind) => `${p}.audit.${kind}`,
    agentsBucket: `${P}_agents`,
    channelsBucket: `${P}_channels`,
    tasksBucket: `${P}_tasks`,
    leasesBucket: `${P}_leases`,
    cursorsBucket: `${P}_cursors`,
    snapshotsBucket: `${P}_snapshots`,
    turnLocksBucket: `${P}_turn_locks`,
    buckets: [
      `${P}_agents`,
      `${P}_channels`,
      `${P}_tasks`,
      `${P}_cursors`,
      `${P}_leases`,
      `${P}_snapshots`,
      `${P}_turn_locks`,
    ],
    deliveryConsumer: 'hub_delivery',
    deliveryConsumerOf: (partition) => (one ? 'hub_delivery' : `hub_delivery_${partition}`),
    leaseKey: (partition) => (one ? 'active' : `active.${partition}`),
    hubsPing: `${p}.hubs.${RPC_VERSION}.ping`,
    hubAlive: (hubId) => `${p}.hubs.${RPC_VERSION}.alive.${hubId}`,
    hubAliveAll: `${p}.hubs.${RPC_VERSION}.alive.*`,
  };
}

/** NATS header names the hub writes on WAL messages. App headers must not start with `Nats-`. */
export const WalHeader = {
  /** The writer's lease epoch (fencing). */
  Epoch: 'Ag2-Epoch',
  /** The envelope's per-channel sequence. */
  Sequence: 'Ag2-Sequence',
} as const;

/**
 * NATS header names the hub writes on inbox deliveries. An identity has no right to publish on any inbox subject,
 * so on a secured deployment a message in an inbox stream was put there by the hub; clients accept a delivery only
 * when it carries `Origin` with the value `DELIVERY_ORIGIN_HUB`.
 */
export const DeliveryHeader = {
  Origin: 'Ag2-Origin',
} as const;

/** The value of `DeliveryHeader.Origin` on deliveries the hub publishes. */
export const DELIVERY_ORIGIN_HUB = 'hub';
