import { InternalError, createIdFactory, hubNames, type Health, type HubNames } from '@ag2net/protocol';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { AuditLog } from './audit/audit-log.js';
import { ChannelTable } from './core/channel-table.js';
import type { HubContext } from './core/context.js';
import { Deliverer } from './core/delivery.js';
import { hydrate } from './core/hydrate.js';
import { AgentRegistry } from './core/registry.js';
import { ChannelWaiters } from './core/waiters.js';
import { createExpectationRegistry } from './governance/expectation-registry.js';
import { InboxCounters } from './governance/inbox-counters.js';
import { RateLimiter } from './governance/rate-limiter.js';
import { buildHandlers, openChannelCount } from './handlers.js';
import { Lease } from './lease.js';
import { provision } from './nats/provision.js';
import { WalReader, WalWriter } from './nats/wal.js';
import { withDefaults, type HubOptions, type ResolvedHubOptions } from './options.js';
import { RpcServer } from './rpc-server.js';
import { KeyedSerial } from './serial.js';
import { snapshotOf, type HubSnapshot } from './snapshot.js';
import { sweep } from './sweep.js';
import { TaskTable } from './tasks/task-table.js';

/** A running hub instance: the active writer, or a standby waiting for the lease. */
export interface Hub {
  readonly hubId: string;
  readonly names: HubNames;
  /** `active` while this instance holds the lease and serves; `standby` otherwise. */
  readonly role: 'active' | 'standby';
  /** The fencing epoch of the current lease (0 on a standby). */
  readonly epoch: number;
  /** Resolves when this instance becomes active. */
  whenActive(): Promise<void>;
  /** Runs the sweepers once now: handshake timeouts, channel and task TTLs, expectations. No-op on a standby. */
  tick(): Promise<void>;
  /** The hub's whole state as plain data. */
  snapshot(): HubSnapshot;
  health(): Health;
  /** Graceful stop: stop admitting, finish what was admitted, stop delivering, release the lease. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Starts a hub on NATS: provisions its streams and buckets, then competes for the single-writer lease. The active
 * instance hydrates its state from NATS, delivers, sweeps and serves RPC; a standby takes over when the lease lapses.
 */
export async function startHub(options: HubOptions = {}): Promise<Hub> {
  const opts = withDefaults(options);
  const expectations = createExpectationRegistry(opts.evaluators, opts.violationHandlers);
  const nc =
    opts.connection ??
    (await connect({
      servers: opts.servers,
      maxReconnectAttempts: -1,
      noAsyncTraces: true,
      name: `hub-${opts.hubId}`,
    }));
  const names = hubNames(opts.prefix);
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  const resources = await provision(nc, jsm, names, { replicas: opts.replicas, leaseTtlMs: opts.leaseTtlMs });
  const logger = opts.logger.child({ hubId: opts.hubId });
  const ids = createIdFactory();
  const ctx: HubContext = {
    nc,
    js,
    jsm,
    names,
    resources,
    registry: new AgentRegistry(resources.agents),
    channels: new ChannelTable(resources.channels),
    adapters: opts.adapters,
    clock: opts.clock,
    logger,
    ids,
    writer: new WalWriter(js, jsm, names),
    reader: new WalReader(js, jsm, names),
    serial: new KeyedSerial(),
    waiters: new ChannelWaiters(),
    inviteAckTimeoutMs: opts.inviteAckTimeoutMs,
    inboxAckWaitMs: opts.inboxAckWaitMs,
    epoch: 0,
    deliveredThrough: 0,
    arbiter: opts.arbiter,
    expectations,
    inboxes: new InboxCounters(),
    rateLimiter: new RateLimiter(),
    audit: new AuditLog(js, jsm, names, opts.clock, ids, logger),
    tasks: new TaskTable(resources.tasks),
    lease: new Lease(resources.leases, jsm, names, opts.hubId),
    counters: { quarantined: 0, deadLetters: 0 },
  };
  const hub = new HubInstance(ctx, opts, opts.connection === null);
  hub.startElection();
  if (opts.awaitActive) await hub.whenActive();
  return hub;
}

class HubInstance implements Hub {
  readonly hubId: string;
  readonly names: HubNames;
  #role: 'active' | 'standby' = 'standby';
  #closed = false;
  #election: Promise<void> | null = null;
  #activeWaiters: (() => void)[] = [];
  #timers: NodeJS.Timeout[] = [];
  readonly #rpc: RpcServer;
  readonly #deliverer: Deliverer;
  readonly #startedAt: number;

  constructor(
    private readonly ctx: HubContext,
    private readonly opts: ResolvedHubOptions,
    private readonly ownsConnection: boolean,
  ) {
    this.hubId = opts.hubId;
    this.names = ctx.names;
    this.#rpc = new RpcServer(ctx.nc, ctx.names, ctx.logger);
    this.#deliverer = new Deliverer(ctx);
    this.#startedAt = Date.now();
  }

  get role(): 'active' | 'standby' {
    return this.#role;
  }

  get epoch(): number {
    return this.#role === 'active' ? this.ctx.epoch : 0;
  }

  whenActive(): Promise<void> {
    if (this.#role === 'active') return Promise.resolve();
    return new Promise((resolve) => this.#activeWaiters.push(resolve));
  }

  startElection(): void {
    this.#election = this.#campaign();
  }

  /** Tries for the lease until it is won (or the hub closes), then serves. */
  async #campaign(): Promise<void> {
    // A released lease is free at once, so standbys try often, not only once per lease time.
    const retryMs = Math.min(1000, Math.max(50, Math.floor(this.opts.leaseTtlMs / 3)));
    while (!this.#closed) {
      let epoch: number | null = null;
      try {
        epoch = await this.ctx.lease.tryAcquire();
      } catch (err) {
        this.ctx.logger.warn({ err }, 'lease attempt failed');
      }
      if (epoch !== null && this.#closed) {
        await this.ctx.lease.release().catch(() => undefined);
        return;
      }
      if (epoch !== null) {
        await this.#becomeActive(epoch);
        return;
      }
      await sleep(retryMs);
    }
  }

  async #becomeActive(epoch: number): Promise<void> {
    this.ctx.epoch = epoch;
    this.ctx.logger.info({ epoch }, 'lease acquired; hydrating');
    await hydrate(this.ctx);
    await this.#deliverer.start();
    this.#rpc.start(buildHandlers(this.ctx, () => this.health()));
    this.#role = 'active';
    // The bucket's TTL is what the first hub created it with; renew within it whatever this hub was told.
    const bucketTtlMs = (await this.ctx.resources.leases.status()).ttl;
    const ttlMs = bucketTtlMs > 0 ? Math.min(bucketTtlMs, this.opts.leaseTtlMs) : this.opts.leaseTtlMs;
    const renewMs = Math.max(50, Math.floor(ttlMs / 3));
    this.#timers.push(setInterval(() => void this.#renew(), renewMs));
    if (this.opts.sweepIntervalMs > 0) {
      this.#timers.push(
        setInterval(
          () => void this.tick().catch((err: unknown) => this.ctx.logger.error({ err }, 'sweep failed')),
          this.opts.sweepIntervalMs,
        ),
      );
    }
    this.ctx.logger.info({ epoch }, 'active');
    for (const resolve of this.#activeWaiters.splice(0)) resolve();
  }

  async #renew(): Promise<void> {
    if (this.#role !== 'active' || this.#closed) return;
    if (await this.ctx.lease.renew()) return;
    this.ctx.logger.error({ epoch: this.ctx.epoch }, 'lease lost; stepping down');
    await this.#stepDown();
    if (!this.#closed) this.startElection();
  }

  async #stepDown(): Promise<void> {
    for (const t of this.#timers.splice(0)) clearInterval(t);
    this.#role = 'standby';
    await this.#rpc.stop();
    await this.ctx.serial.idle();
    await this.#deliverer.stop();
    this.ctx.waiters.abort(new InternalError('the hub stepped down; retry'));
  }

  async tick(): Promise<void> {
    if (this.#role !== 'active') return;
    await sweep(this.ctx);
  }

  snapshot(): HubSnapshot {
    return snapshotOf(this.ctx);
  }

  health(): Health {
    return {
      hub_id: this.hubId,
      role: this.#role,
      epoch: this.epoch,
      active_channels: openChannelCount(this.ctx),
      registered_agents: this.ctx.registry.size,
      adapters_loaded: this.ctx.adapters.size,
      uptime_seconds: (Date.now() - this.#startedAt) / 1000,
      quarantined: this.ctx.counters.quarantined,
      dead_letters: this.ctx.counters.deadLetters,
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const wasActive = this.#role === 'active';
    if (wasActive) await this.#stepDown();
    await this.#election;
    if (wasActive)
      await this.ctx.lease.release().catch((err: unknown) => this.ctx.logger.warn({ err }, 'lease release failed'));
    if (this.ownsConnection) await this.ctx.nc.close();
    this.ctx.logger.info({}, 'hub stopped');
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
