import { z } from 'zod';

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
  /** `<prefix>.hub.v1.<op>` or, for operations with a caller, `<prefix>.hub.v1.<op>.<caller_id>`. */
  rpc(op: string, callerId?: string): string;
  /** The subject a hub subscribes to for an operation (`….<op>` or `….<op>.*`). */
  rpcListen(op: string, withCaller: boolean): string;
  /** `<prefix>.wal.<channel_id>`: one literal subject per channel. */
  wal(channelId: string): string;
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
  /** The hub's durable consumer over the WAL that fans admitted envelopes out to inboxes. */
  readonly deliveryConsumer: string;
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

/** The names of the hub with `prefix`. */
export function hubNames(prefix: string = DEFAULT_PREFIX): HubNames {
  const p = PrefixSchema.parse(prefix);
  const P = p.toUpperCase();
  return {
    prefix: p,
    rpc: (op, callerId) =>
      callerId === undefined ? `${p}.hub.${RPC_VERSION}.${op}` : `${p}.hub.${RPC_VERSION}.${op}.${callerId}`,
    rpcListen: (op, withCaller) => `${p}.hub.${RPC_VERSION}.${op}${withCaller ? '.*' : ''}`,
    wal: (channelId) => `${p}.wal.${channelId}`,
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
