import { hubNames, type Health, type HubNames } from '@ag2net/protocol';
import type { Hub } from './hub-api.js';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { setMaxListeners } from 'node:events';
import { createCredentialsIssuer } from './auth/issuer.js';
import { openChannelCount } from './handlers.js';
import { bindObserver } from './operations/channel-counts.js';
import { assembleHub, type AssembledHub } from './assemble-hub.js';
import { createExpectationRegistry } from './governance/expectation-registry.js';
import { Assignment } from './lease/assignment.js';
import { pause } from './lease/lease-keeper.js';
import { readLeaseValue } from './lease/lease-record.js';
import { provision } from './nats/provision.js';
import { withDefaults, type HubOptions, type ResolvedHubOptions } from './options.js';
import { HubRoster } from './rpc/hub-roster.js';
import { GoneWatch, HubPresence } from './lease/presence.js';
import { HomeReplica } from './operations/home-replica.js';
import { hydrateScans } from './operations/hydrate.js';
import { snapshotOf, type HubSnapshot } from './operations/hub-snapshot.js';
import { PartitionRunner } from './partition-runner.js';

export type { Hub } from './hub-api.js';

/**
 * Starts a hub on NATS: provisions its streams and buckets, then competes for the single-writer lease. The active
 * instance hydrates its state from NATS, delivers, sweeps and serves RPC; a standby takes over when the lease lapses.
 */
export async function startHub(options: HubOptions = {}): Promise<Hub> {
  const opts = withDefaults(options);
  const expectations = createExpectationRegistry(opts.evaluators, opts.violationHandlers);
  const names = hubNames(opts.prefix, opts.partitions);
  // Checked before connecting: a malformed signing key fails the start, not the first registration.
  const issuer = opts.credentials === null ? null : createCredentialsIssuer(opts.credentials, names);
  const nc =
    opts.connection ??
    (await connect({
      servers: opts.servers,
      maxReconnectAttempts: -1,
      reconnectTimeWait: HUB_RECONNECT_WAIT_MS,
      noAsyncTraces: true,
      name: `hub-${opts.hubId}`,
    }));
  const jsm = await jetstreamManager(nc);
  const resources = await provision(
    { nc, jsm, names },
    {
      replicas: opts.replicas,
      leaseTtlMs: opts.leaseTtlMs,
      limits: opts.limits,
    },
  );
  const ctx = assembleHub({ opts, names, nc, jsm, resources, issuer, expectations });
  bindObserver(ctx.home, ctx.views);
  const hub = new HubInstance(ctx, opts, opts.connection === null);
  await hub.startElection();
  if (opts.awaitActive) await hub.whenActive();
  return hub;
}

/**
 * How long a hub's connection waits between two reconnect attempts, ms. nats.js waits 2 s, which a short server
 * restart turns into a failover: a 3 s restart plus up to 2 s of waiting outlasts the 4.8 s a 6 s lease holds after
 * its last renewal. Attempts every 250 ms cost one connect each while the server is down.
 */
export const HUB_RECONNECT_WAIT_MS = 250;

class HubInstance implements Hub {
  readonly hubId: string;
  readonly names: HubNames;
  #closed = false;
  /** Aborted by `close()`: ends every partition's current term and every pause of the campaigns. */
  readonly #stop = new AbortController();
  #campaigns: Promise<void>[] = [];
  #rebalance: Promise<void> | null = null;
  #activeWaiters: (() => void)[] = [];
  /** Answers the roster (`names.hubsPing`) in every role, from the election's start to the close. */
  readonly #roster: HubRoster;
  /** This hub's presence subscription, and the probes of other hubs' (`HubPresence`). */
  readonly #presence: HubPresence;
  /** One per partition of the deployment: `#runners[k]` campaigns for and serves partition `k`. */
  readonly #runners: PartitionRunner[];
  readonly #goneWatches: GoneWatch[];
  /** Which hub should own which partition; `null` with one partition. */
  readonly #assignment: Assignment | null;
  /** The agents, tasks and channel index followed from KV; `null` with one partition. */
  readonly #replica: HomeReplica | null;
  readonly #startedAt: number;
  readonly #closedResult: Promise<void | Error>;
  #settleClosed: (result: void | Error) => void = () => undefined;

  constructor(
    private readonly ctx: AssembledHub,
    private readonly opts: ResolvedHubOptions,
    private readonly ownsConnection: boolean,
  ) {
    this.hubId = opts.hubId;
    this.names = ctx.names;
    // Every partition's campaign, term and pauses listen to it: a few listeners per partition, not a leak.
    setMaxListeners(8 * ctx.names.partitions + 16, this.#stop.signal);
    const { home } = ctx;
    const importAccount = home.issuer?.accountPublicKey ?? null;
    this.#roster = new HubRoster(home.nc, ctx.names, { logger: ctx.logger, importAccount });
    this.#presence = new HubPresence(home.nc, ctx.names, { hubId: opts.hubId, logger: ctx.logger });
    const partitioned = ctx.names.partitions > 1;
    this.#assignment = partitioned
      ? new Assignment({
          kv: home.resources.leases,
          hubId: opts.hubId,
          partitions: ctx.names.partitions,
          leaseTtlMs: opts.leaseTtlMs,
          presence: this.#presence,
          logger: ctx.logger,
        })
      : null;
    this.#replica = partitioned ? new HomeReplica({ ...home, logger: ctx.logger }) : null;
    this.#goneWatches = ctx.views.map(() => new GoneWatch(this.#presence));
    // Partitions won together (a hub starting alone wins them all) read each bucket once between them.
    const scans = partitioned ? hydrateScans({ ...home, names: ctx.names }) : null;
    this.#runners = ctx.views.map(
      (view, k) =>
        new PartitionRunner(view, {
          opts,
          goneWatch: this.#goneWatches[k] ?? new GoneWatch(this.#presence),
          assignment: this.#assignment,
          replica: this.#replica,
          scans,
          importAccount,
          health: () => this.health(),
          onServing: () => this.#onServing(),
        }),
    );
    void this.#watchConnection().catch((err: unknown) => ctx.logger.error({ err }, 'connection watch failed'));
    this.#startedAt = Date.now();
    this.#closedResult = new Promise((resolve) => (this.#settleClosed = resolve));
    // A connection closed for good (not by `close()`) ends the hub: nothing it does can work any more.
    void home.nc.closed().then((err) => {
      if (this.#closed) return;
      const reason = err instanceof Error ? err : new Error('the NATS connection closed');
      ctx.logger.error({ err: reason }, 'NATS connection closed; the hub stops');
      void this.#shutdown(reason);
    });
  }

  /** `active` while this hub serves at least one partition. */
  get role(): 'active' | 'standby' {
    return this.#runners.some((r) => r.serving) ? 'active' : 'standby';
  }

  /** The epoch of partition 0's term while this hub serves it, else of the first partition it serves; 0 for none. */
  get epoch(): number {
    return this.#runners.find((r) => r.serving)?.epoch ?? 0;
  }

  /**
   * Resolves once this hub serves every partition it should own: with one partition, once it holds the lease; with
   * several, once it serves each partition the assignment prefers it for (all of them for a hub alone).
   */
  whenActive(): Promise<void> {
    if (this.#settled()) return Promise.resolve();
    return new Promise((resolve) => this.#activeWaiters.push(resolve));
  }

  #settled(): boolean {
    const assignment = this.#assignment;
    if (assignment === null) return this.role === 'active';
    return this.#runners.every((r) => r.serving || !assignment.prefers(r.index));
  }

  closed(): Promise<void | Error> {
    return this.#closedResult;
  }

  /**
   * Starts the roster, the presence and, with several partitions, the assignment and the home replica; then one
   * campaign per partition (and the rebalancing that hands partitions to their preferred owners).
   */
  async startElection(): Promise<void> {
    this.#roster.start(() => this.health());
    this.#presence.start();
    const signal = this.#stop.signal;
    if (this.#replica !== null) await this.#replica.start();
    if (this.#assignment !== null) {
      await this.#assignment.start(signal);
      this.#rebalance = this.#rebalanceLoop(this.#assignment, signal).catch((err: unknown) =>
        this.ctx.logger.error({ err }, 'rebalancing failed'),
      );
    }
    this.#campaigns = this.#runners.map((runner) =>
      runner.campaign(signal).catch((err: unknown) => {
        // The campaign catches everything it awaits; this is the last line, so that nothing is ever unhandled.
        this.ctx.logger.error({ err, partition: runner.index }, 'election failed');
      }),
    );
  }

  #onServing(): void {
    if (this.#activeWaiters.length > 0 && this.#settled())
      for (const resolve of this.#activeWaiters.splice(0)) resolve();
  }

  /**
   * Hands partitions this hub holds to their preferred owners, one at a time: only to a hub live for two lease times
   * (so that a hub that flaps moves nothing), and the next only once the last one's new owner serves it.
   */
  async #rebalanceLoop(assignment: Assignment, signal: AbortSignal): Promise<void> {
    const settleMs = 2 * this.opts.leaseTtlMs;
    const everyMs = Math.max(50, Math.floor(this.opts.leaseTtlMs / 3));
    while (!signal.aborted) {
      await pause(everyMs, signal);
      if (signal.aborted) break;
      this.#onServing(); // the live hubs change what this hub should serve
      const runner = this.#runners.find((r) => {
        if (!r.serving) return false;
        const owner = assignment.preferred(r.index);
        return owner !== this.hubId && assignment.liveForMs(owner) >= settleMs;
      });
      if (runner === undefined) continue;
      const to = assignment.preferred(runner.index);
      this.ctx.logger.info({ partition: runner.index, to }, 'handing the partition over to its preferred owner');
      await runner.handOver();
      await this.#servedElsewhere(runner.index, settleMs, signal);
    }
  }

  /** Waits until another hub holds partition `k`'s lease, or `ms` passed. */
  async #servedElsewhere(k: number, ms: number, signal: AbortSignal): Promise<void> {
    const until = performance.now() + ms;
    const key = this.names.leaseKey(k);
    while (!signal.aborted && performance.now() < until) {
      const value = readLeaseValue(await this.ctx.home.resources.leases.get(key).catch(() => null));
      if (value.kind === 'held' && value.hubId !== this.hubId) return;
      await pause(100, signal);
    }
  }

  /**
   * Follows this hub's own connection: a holder that loses it suspends its leases at once (`Lease.suspend`: nothing
   * is served or written until a renewal proves nobody took over), and the judgements of other hubs start over.
   */
  async #watchConnection(): Promise<void> {
    for await (const status of this.ctx.home.nc.status()) {
      if (status.type === 'disconnect') {
        for (const watch of this.#goneWatches) watch.disconnected();
        this.#assignment?.disconnected();
        for (const view of this.ctx.views) {
          if (!view.partition.lease.holds()) continue;
          view.partition.lease.suspend();
          view.logger.warn(
            { epoch: view.partition.epoch },
            'NATS connection lost; serving nothing until the lease is renewed',
          );
        }
      } else if (status.type === 'reconnect') {
        for (const watch of this.#goneWatches) watch.reconnected();
        this.#assignment?.reconnected();
      }
    }
  }

  async tick(): Promise<void> {
    for (const runner of this.#runners) await runner.tick();
  }

  /** The partitions this hub serves now. */
  #served(): AssembledHub['views'] {
    return this.ctx.views.filter((_, k) => this.#runners[k]?.serving === true);
  }

  snapshot(): HubSnapshot {
    return snapshotOf(this.ctx.home, this.ctx.names.partitions === 1 ? this.ctx.views : this.#served());
  }

  health(): Health {
    const { home } = this.ctx;
    const served = this.ctx.names.partitions === 1 ? this.ctx.views : this.#served();
    return {
      hub_id: this.hubId,
      role: this.role,
      epoch: this.epoch,
      active_channels: served.reduce((n, view) => n + openChannelCount(view), 0),
      registered_agents: home.registry.size,
      adapters_loaded: home.adapters.size,
      uptime_seconds: (Date.now() - this.#startedAt) / 1000,
      quarantined: home.counters.quarantined,
      dead_letters: home.counters.deadLetters,
      partitions: this.names.partitions,
      held: this.#runners.filter((r) => r.serving).map((r) => ({ partition: r.index, epoch: r.epoch })),
    };
  }

  close(): Promise<void> {
    return this.#shutdown(undefined);
  }

  /** Ends every partition's term (stepping down and releasing its lease), stops campaigning, settles `closed()`. */
  async #shutdown(result: void | Error): Promise<void> {
    if (this.#closed) {
      await this.#closedResult;
      return;
    }
    this.#closed = true;
    // Leaving first: the other hubs campaign for this hub's partitions while it steps down from each.
    await this.#assignment?.stop().catch((err: unknown) => this.ctx.logger.warn({ err }, 'leaving failed'));
    this.#stop.abort();
    await Promise.all(this.#campaigns);
    await this.#rebalance;
    await this.#replica?.stop();
    await this.#roster.stop();
    await this.#presence.stop();
    this.ctx.home.outbox.close();
    const { nc } = this.ctx.home;
    const { logger } = this.ctx;
    if (this.ownsConnection && !nc.isClosed()) {
      await nc.close().catch((err: unknown) => logger.warn({ err }, 'closing NATS failed'));
    }
    logger.info({}, 'hub stopped');
    this.#settleClosed(result);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
