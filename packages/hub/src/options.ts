import { createDefaultAdapterRegistry, type AdapterRegistry } from '@ag2net/adapters';
import { DEFAULT_PREFIX, newId } from '@ag2net/protocol';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Authenticator } from './auth/authenticator.js';
import type { CredentialsIssuerOptions } from './auth/issuer.js';
import type { RegistrationLimits } from './auth/caller-gate.js';
import { systemClock, type Clock } from './base/clock.js';
import { guardArbiter, ruleBasedArbiter, type HubArbiter } from './governance/arbiter.js';
import type { ExpectationEvaluator } from './governance/evaluators.js';
import type { ViolationHandler } from './governance/violation-handlers.js';
import { silentLogger, type Logger } from './base/logger.js';
import { noObserver, type HubObserver } from './observe/observer.js';
import {
  operatorLimitsWithDefaults,
  type OperatorLimits,
  type ResolvedOperatorLimits,
} from './governance/operator-limits.js';

/** Options of `startHub`. */
export interface HubOptions {
  /** NATS server URL(s) to connect to; ignored when `connection` is given. Default `nats://127.0.0.1:4222`. */
  readonly servers?: string | string[];
  /** An existing connection to use (the hub does not close it). */
  readonly connection?: NatsConnection;
  /** Namespace of this hub's subjects, streams and buckets; default `ag2`. */
  readonly prefix?: string;
  /** This instance's id in the lease and in logs; default a fresh ULID. */
  readonly hubId?: string;
  /** Time source; default the system clock. */
  readonly clock?: Clock;
  /** pino-compatible logger; default silent. */
  readonly logger?: Logger;
  /** Channel protocols; default the four built-in ones. */
  readonly adapters?: AdapterRegistry;
  /** How long invitees have to ack an invite, in ms; default 30 000. */
  readonly inviteAckTimeoutMs?: number;
  /**
   * How long an agent's inbox waits for a delivery's ack before redelivering it, in ms; default 10 000. Clients
   * extend it every third of it while a turn runs, so it bounds how long a crashed runner's turn waits (about this
   * long, or the turn lock's TTL when that is longer), not how long a turn may take. Applied to an inbox when its
   * agent registers.
   */
  readonly inboxAckWaitMs?: number;
  /** Lease time, in ms: a standby takes over this long after the active hub dies; default 6 000. */
  readonly leaseTtlMs?: number;
  /** How often sweepers run (handshake timeouts, TTLs), in ms; 0 disables the timer (call `tick()`); default 1 000. */
  readonly sweepIntervalMs?: number;
  /**
   * How long a channel's history is kept after the channel ended (`closed` or `expired`, from its `closed_at`), in ms;
   * default `null`, kept forever. Then the sweeper removes the channel's WAL entries (a purge of its subject), its
   * snapshots and indexes, at most 16 channels a sweep, and its record keeps its metadata with `expired_at` (a
   * tombstone). From that moment `readWal` and `adapterState` of the channel answer `not_found` with `details.reason`
   * `expired`. Removal is irreversible: export what you keep first (`ag2net export`). The hub's NATS user needs the
   * purge right on the WAL stream (`hubServicePermissions`). A negative value throws `RangeError`.
   */
  readonly retainClosedMs?: number | null;
  /**
   * How many partitions the prefix's channels are spread over, each owned by one hub instance at a time (1 to
   * `MAX_PARTITIONS`); default 1: one partition, one active hub, today's subjects. Fixed when the prefix is first
   * provisioned: every hub of a prefix must be started with the same count, and a hub started with another is
   * refused (`PartitionCountError`). With several, every running hub instance owns a share of them.
   */
  readonly partitions?: number;
  /** Replicas of streams and buckets: 1 for one server, 3 for a cluster; default 1. */
  readonly replicas?: number;
  /** Resolve `startHub` only once this instance is the active hub (default true); false returns a standby at once. */
  readonly awaitActive?: boolean;
  /** The policy for sends, deliveries, channel opens and new tasks; default `ruleBasedArbiter` (each agent's `Rule`). */
  readonly arbiter?: HubArbiter;
  /** Extra expectation evaluators, by name; one named like a built-in replaces it. Default none. */
  readonly evaluators?: readonly ExpectationEvaluator[];
  /** Extra violation handlers, by name (not a built-in's). Default none. */
  readonly violationHandlers?: readonly ViolationHandler[];
  /**
   * The operator's ceilings on every agent's `Rule` limits and the quotas of streams and buckets; each field
   * defaults as `DEFAULT_OPERATOR_LIMITS` says (finite ceilings, no byte quotas).
   */
  readonly limits?: OperatorLimits;
  /** Told what the hub does, for metrics (`hub-service` feeds Prometheus with it); default none. */
  readonly observer?: HubObserver;
  /**
   * Issue per-identity NATS credentials (a secured hub): `register` then requires the identity's `public_key` and
   * answers a user JWT for it with that identity's permissions, `attach` and `renewCredentials` answer fresh ones.
   * Absent (the default): the hub issues none, answers `credentials: null` and needs no key (a hub on a NATS without
   * auth).
   */
  readonly credentials?: CredentialsIssuerOptions;
  /**
   * Who may register and attach (`openRegistration()`, `apiKeyAuthenticator({ keys })` or your own). Default: on a
   * hub with `credentials`, nobody (every registration is refused with a message naming the options); on a hub
   * without, AG2's default (scheme `none` only, `remote_agent` passports unchecked).
   */
  readonly authenticator?: Authenticator;
  /**
   * Budgets of `register` and `attach` per requesting connection and per source address, on a hub whose requests
   * arrive through the identity account (which reports both); default 120 a minute (bursts of 50) per connection and
   * 1,200 a minute (bursts of 200) per address. A request past its budget is answered `unavailable` with
   * `details.retry_after_ms`.
   */
  readonly registrationLimits?: RegistrationLimits;
}

export type ResolvedHubOptions = Required<
  Omit<HubOptions, 'connection' | 'limits' | 'credentials' | 'authenticator'>
> & {
  readonly connection: NatsConnection | null;
  readonly limits: ResolvedOperatorLimits;
  readonly credentials: CredentialsIssuerOptions | null;
  readonly authenticator: Authenticator | null;
};

export function withDefaults(options: HubOptions): ResolvedHubOptions {
  return {
    servers: options.servers ?? 'nats://127.0.0.1:4222',
    connection: options.connection ?? null,
    prefix: options.prefix ?? DEFAULT_PREFIX,
    hubId: hubIdOf(options.hubId),
    clock: options.clock ?? systemClock,
    logger: options.logger ?? silentLogger,
    adapters: options.adapters ?? createDefaultAdapterRegistry(),
    inviteAckTimeoutMs: options.inviteAckTimeoutMs ?? 30_000,
    inboxAckWaitMs: options.inboxAckWaitMs ?? DEFAULT_INBOX_ACK_WAIT_MS,
    leaseTtlMs: options.leaseTtlMs ?? 6_000,
    sweepIntervalMs: options.sweepIntervalMs ?? 1_000,
    retainClosedMs: retention(options.retainClosedMs ?? null),
    partitions: options.partitions ?? 1,
    replicas: options.replicas ?? 1,
    awaitActive: options.awaitActive ?? true,
    // Guarded: a policy that throws denies that one decision (logged) instead of failing the operation.
    arbiter: guardArbiter(options.arbiter ?? ruleBasedArbiter, options.logger ?? silentLogger),
    evaluators: options.evaluators ?? [],
    violationHandlers: options.violationHandlers ?? [],
    limits: operatorLimitsWithDefaults(options.limits),
    observer: options.observer ?? noObserver,
    credentials: options.credentials ?? null,
    authenticator: options.authenticator ?? null,
    registrationLimits: options.registrationLimits ?? {},
  };
}

/** A retention as `withDefaults` keeps it: `null` (forever) or whole milliseconds from 0 on. */
function retention(ms: number | null): number | null {
  if (ms === null || ms === Infinity) return null;
  if (!(ms >= 0)) throw new RangeError(`retainClosedMs must be a number of ms from 0 on, or null; got ${ms}`);
  return Math.floor(ms);
}

/**
 * The default inbox ack wait, ms: a crashed replica's turn is taken over about this long after its last progress
 * signal, the runner's default turn-lock TTL, which lapses as soon. Clients signal every third of it (2 s), so only a
 * client whose event loop is blocked for 6 s loses a delivery it is still working on (to a replica, whose turn lock
 * then refuses to run it twice); such a block also lapses the runner's turn lock.
 */
export const DEFAULT_INBOX_ACK_WAIT_MS = 6_000;

/** A hub id is one subject token (`names.hubAlive`): letters, digits, `_` and `-`, at most 64. */
const HUB_ID = /^[A-Za-z0-9_-]{1,64}$/;

function hubIdOf(hubId: string | undefined): string {
  if (hubId === undefined) return newId();
  if (!HUB_ID.test(hubId)) {
    throw new TypeError(`hubId ${JSON.stringify(hubId.slice(0, 80))} must be 1 to 64 letters, digits, "_" or "-"`);
  }
  return hubId;
}
