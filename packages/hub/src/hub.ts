import { UnavailableError, hubNames, type Health, type HubNames } from '@ag2net/protocol';
import type { Hub } from './hub-api.js';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { createCredentialsIssuer } from './auth/issuer.js';
import { Deliverer } from './operations/delivery.js';
import { hydrate } from './operations/hydrate.js';
import { accessDirectory } from './operations/access.js';
import { callerDirectory } from './auth/credential-state.js';
import { buildHandlers, openChannelCount } from './handlers.js';
import { bindObserver } from './operations/channel-counts.js';
import { assembleHub, type AssembledHub } from './assemble-hub.js';
import type { Partition } from './partition/partition.js';
import { createExpectationRegistry } from './governance/expectation-registry.js';
import { traceHandlers } from './rpc/traced-handlers.js';
import { backoffMs, pause, whileHeld } from './lease/lease-keeper.js';
import { keepTermLease, untilTermEnds, type TermEnd } from './lease/term.js';
import { provision } from './nats/provision.js';
import { withDefaults, type HubOptions, type ResolvedHubOptions } from './options.js';
import { RpcServer } from './rpc/rpc-server.js';
import { HubRoster } from './rpc/hub-roster.js';
import { GoneWatch, HubPresence } from './lease/presence.js';
import { snapshotOf, type HubSnapshot } from './operations/hub-snapshot.js';
import { SNAPSHOT_IDLE_MS } from './stores/snapshot-store.js';
import { sweep } from './operations/sweep.js';

export type { Hub } from './hub-api.js';

/**
 * Starts a hub on NATS: provisions its streams and buckets, then competes for the single-writer lease. The active
 * instance hydrates its state from NATS, delivers, sweeps and serves RPC; a standby takes over when the lease lapses.
 */
export async function startHub(options: HubOptions = {}): Promise<Hub> {
  const opts = withDefaults(options);
  const expectations = createExpectationRegistry(opts.evaluators, opts.violationHandlers);
  const names = hubNames(opts.prefix);
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
  bindObserver(ctx);
  const hub = new HubInstance(ctx, opts, opts.connection === null);
  hub.startElection();
  if (opts.awaitActive) await hub.whenActive();
  return hub;
}

/**
 * How long a hub's connection waits between two reconnect attempts, ms. nats.js waits 2 s, which a short server
 * restart turns into a failover: a 3 s restart plus up to 2 s of waiting outlasts the 4.8 s a 6 s lease holds after
 * its last renewal. Attempts every 250 ms cost one connect each while the server is down.
 */
export const HUB_RECONNECT_WAIT_MS = 250;

/**
 * How often a standby looks at the lease, ms (at most; a third of a short lease when that is less): a released lease
 * is taken at once, and a holder whose connection is gone is probed at this pace (`GoneWatch`).
 */
const STANDBY_POLL_MS = 250;

/** The longest pause between two campaigns after failures, ms. */
const MAX_BACKOFF_MS = 5_000;

class HubInstance implements Hub {
  readonly hubId: string;
  readonly names: HubNames;
  #role: 'active' | 'standby' = 'standby';
  #closed = false;
  /** Aborted by `close()`: ends the current term and every pause of the campaign. */
  readonly #stop = new AbortController();
  #election: Promise<void> | null = null;
  /** Incremented at every acquisition: work of an older term never touches a newer one. */
  #term = 0;
  #activeWaiters: (() => void)[] = [];
  #timers: NodeJS.Timeout[] = [];
  readonly #rpc: RpcServer;
  /** Answers the roster (`names.hubsPing`) in every role, from the election's start to the close. */
  readonly #roster: HubRoster;
  /** This hub's presence subscription, and a standby's probes of the holder's (`HubPresence`). */
  readonly #presence: HubPresence;
  readonly #goneWatch: GoneWatch;
  readonly #deliverer: Deliverer;
  /** The hub's one partition: every channel, under the hub's lease. */
  readonly #partition: Partition;
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
    this.#partition = ctx.partition;
    const importAccount = ctx.issuer?.accountPublicKey ?? null;
    this.#rpc = new RpcServer(ctx.nc, ctx.names, {
      logger: ctx.logger,
      serving: () => ctx.partition.lease.holds(),
      importAccount,
      registration: opts.registrationLimits,
    });
    this.#rpc.observe(ctx.observer);
    this.#roster = new HubRoster(ctx.nc, ctx.names, { logger: ctx.logger, importAccount });
    this.#presence = new HubPresence(ctx.nc, ctx.names, { hubId: opts.hubId, logger: ctx.logger });
    this.#goneWatch = new GoneWatch(this.#presence);
    void this.#watchConnection().catch((err: unknown) => ctx.logger.error({ err }, 'connection watch failed'));
    this.#deliverer = new Deliverer(ctx);
    this.#startedAt = Date.now();
    this.#closedResult = new Promise((resolve) => (this.#settleClosed = resolve));
    // A connection closed for good (not by `close()`) ends the hub: nothing it does can work any more.
    void ctx.nc.closed().then((err) => {
      if (this.#closed) return;
      const reason = err instanceof Error ? err : new Error('the NATS connection closed');
      ctx.logger.error({ err: reason }, 'NATS connection closed; the hub stops');
      void this.#shutdown(reason);
    });
  }

  get role(): 'active' | 'standby' {
    return this.#role;
  }

  get epoch(): number {
    return this.#role === 'active' ? this.#partition.epoch : 0;
  }

  whenActive(): Promise<void> {
    if (this.#role === 'active') return Promise.resolve();
    return new Promise((resolve) => this.#activeWaiters.push(resolve));
  }

  closed(): Promise<void | Error> {
    return this.#closedResult;
  }

  startElection(): void {
    this.#roster.start(() => this.health());
    this.#presence.start();
    this.#election = this.#campaign().catch((err: unknown) => {
      // #campaign catches everything it awaits; this is the last line, so that nothing is ever unhandled.
      this.ctx.logger.error({ err }, 'election failed');
    });
  }

  /**
   * Tries for the lease until the hub closes: serves each term it wins, and after a term ends (lease lost, a
   * required loop ended, a failure anywhere) steps down, releases what it holds and tries again. Failures back off
   * (bounded, jittered); a lease held by another hub is retried often, since a released lease is free at once.
   */
  async #campaign(): Promise<void> {
    const retryMs = Math.min(1000, Math.max(50, Math.floor(this.opts.leaseTtlMs / 3)));
    const standbyMs = Math.min(retryMs, STANDBY_POLL_MS);
    const signal = this.#stop.signal;
    let failures = 0;
    while (!this.#closed) {
      let epoch: number | null = null;
      try {
        epoch = (await this.#partition.lease.tryAcquire()) ?? (await this.#takeOverFromGone());
      } catch (err) {
        failures += 1;
        this.ctx.logger.warn({ err, failures }, 'lease attempt failed');
        await pause(backoffMs(failures, retryMs, MAX_BACKOFF_MS), signal);
        continue;
      }
      if (epoch === null) {
        failures = 0; // the lease bucket answered: another hub holds the lease
        await pause(backoffMs(0, standbyMs, standbyMs), signal);
        continue;
      }
      const end = await this.#serveTerm(epoch);
      failures = end === 'failed' ? failures + 1 : 0;
      if (end !== 'closed') await pause(backoffMs(failures, retryMs, MAX_BACKOFF_MS), signal);
    }
  }

  /**
   * Takes the lease over from the hub that holds it once its NATS connection has been seen gone for
   * `GONE_CONFIRM_MS` (`GoneWatch`): a dead hub is replaced in about a second instead of its lease time. `null` while
   * the holder is connected, or when the key moved meanwhile.
   */
  async #takeOverFromGone(): Promise<number | null> {
    const holder = this.#partition.lease.observedHolder();
    if (holder === null || holder.hubId === this.hubId) return null;
    if (!(await this.#goneWatch.confirmedGone(holder))) return null;
    const epoch = await this.#partition.lease.takeOver(holder);
    if (epoch !== null) {
      this.ctx.logger.warn({ from: holder.hubId, epoch }, 'took the lease over from a hub whose connection is gone');
    }
    return epoch;
  }

  /**
   * Follows this hub's own connection: a holder that loses it suspends its lease at once (`Lease.suspend`: nothing is
   * served or written until a renewal proves nobody took over), and a standby restarts its judgement of the holder.
   */
  async #watchConnection(): Promise<void> {
    for await (const status of this.ctx.nc.status()) {
      if (status.type === 'disconnect') {
        this.#goneWatch.disconnected();
        if (this.#partition.lease.holds()) {
          this.#partition.lease.suspend();
          this.ctx.logger.warn(
            { epoch: this.#partition.epoch },
            'NATS connection lost; serving nothing until the lease is renewed',
          );
        }
      } else if (status.type === 'reconnect') {
        this.#goneWatch.reconnected();
      }
    }
  }

  /** One term: keep the lease from now on, hydrate, serve until the term ends, step down. Never throws. */
  async #serveTerm(epoch: number): Promise<TermEnd> {
    const term = ++this.#term;
    const abort = new AbortController();
    const onStop = (): void => abort.abort();
    this.#stop.signal.addEventListener('abort', onStop, { once: true });
    let end: TermEnd = 'failed';
    let keeper: Promise<'lost' | 'stopped'> = Promise.resolve('stopped');
    /** What the term was doing, for the log when it fails. */
    let phase = 'starting';
    try {
      if (this.#closed) {
        end = 'closed';
        return end;
      }
      this.#partition.epoch = epoch;
      phase = 'reading the lease period';
      ({ keeper } = await keepTermLease({
        lease: this.#partition.lease,
        leases: this.ctx.resources.leases,
        leaseTtlMs: this.opts.leaseTtlMs,
        epoch,
        logger: this.ctx.logger,
        signal: abort.signal,
      }));
      let keeperResult: 'lost' | 'stopped' | null = null;
      void keeper.then((r) => (keeperResult = r));
      this.ctx.logger.info({ epoch, term }, 'lease acquired; hydrating');
      phase = 'hydrating';
      await hydrate(this.ctx);
      if (keeperResult === 'lost') return (end = 'lost');
      if (this.#closed) return (end = 'closed');
      phase = 'starting delivery';
      await this.#deliverer.start();
      phase = 'starting rpc';
      this.#rpc.start(
        traceHandlers(buildHandlers(this.ctx, () => this.health())),
        accessDirectory(this.ctx),
        callerDirectory(this.ctx),
      );
      // The server knows the RPC subscriptions once a flush returns: "active" means requests find a responder.
      await this.ctx.nc.flush();
      phase = 'serving';
      this.#startSweeper();
      this.#timers.push(setInterval(() => this.#partition.snapshots.flushIdle(), SNAPSHOT_IDLE_MS / 2));
      this.#role = 'active';
      this.ctx.logger.info({ epoch, term }, 'active');
      for (const resolve of this.#activeWaiters.splice(0)) resolve();
      end = await untilTermEnds({
        keeper,
        signal: abort.signal,
        logger: this.ctx.logger,
        loops: [
          { what: 'rpc subscription', done: this.#rpc.closed() },
          { what: 'delivery consumer', done: this.#deliverer.closed() },
        ],
      });
    } catch (err) {
      this.ctx.logger.error({ err, epoch, term, phase }, 'term failed; stepping down');
      end = this.#closed ? 'closed' : 'failed';
    } finally {
      abort.abort();
      this.#stop.signal.removeEventListener('abort', onStop);
      await this.#stepDown();
      await keeper;
      if (end !== 'lost') {
        await this.#partition.lease
          .release()
          .catch((err: unknown) => this.ctx.logger.warn({ err }, 'lease release failed'));
      }
      if (end === 'lost') this.ctx.logger.error({ epoch, term }, 'lease lost; stepped down');
    }
    return end;
  }

  #startSweeper(): void {
    if (this.opts.sweepIntervalMs <= 0) return;
    this.#timers.push(
      setInterval(
        () => void this.tick().catch((err: unknown) => this.ctx.logger.error({ err }, 'sweep failed')),
        this.opts.sweepIntervalMs,
      ),
    );
  }

  /**
   * Stops serving: no new requests, admitted work finishes, delivery stops, waiters learn to retry. Each step runs
   * even when an earlier one fails, and none throws: a step-down must always complete.
   */
  async #stepDown(): Promise<void> {
    for (const t of this.#timers.splice(0)) clearInterval(t);
    this.#role = 'standby';
    const step = async (what: string, run: () => Promise<void>): Promise<void> => {
      try {
        await run();
      } catch (err) {
        this.ctx.logger.warn({ err, what }, 'step-down step failed');
      }
    };
    await step('rpc', () => this.#rpc.stop());
    // While the lease still holds, admitted work finishes and every channel's snapshot catches up (so that the
    // successor's hydrate is short), and delivery fans out what that work appends. Once the lease is gone a successor
    // may serve: delivery stops at once, whatever work is still waiting on NATS (its writes are refused now), so that
    // two hubs never pull the delivery consumer together.
    if (this.#partition.lease.holds()) {
      this.#partition.snapshots.flushIdle(0);
      await step('serial', () => whileHeld(this.#partition.lease, this.#partition.serial.idle()));
      await step('snapshots', () => whileHeld(this.#partition.lease, this.#partition.snapshots.idle()));
    }
    await step('delivery', () => this.#deliverer.stop());
    await step('serial', () => this.#partition.serial.idle());
    await step('snapshots', () => this.#partition.snapshots.idle());
    this.#partition.waiters.abort(new UnavailableError('the hub stepped down; retry'));
  }

  async tick(): Promise<void> {
    if (this.#role !== 'active' || !this.#partition.lease.holds()) return;
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

  close(): Promise<void> {
    return this.#shutdown(undefined);
  }

  /** Ends the current term (stepping down and releasing the lease), stops campaigning, settles `closed()`. */
  async #shutdown(result: void | Error): Promise<void> {
    if (this.#closed) {
      await this.#closedResult;
      return;
    }
    this.#closed = true;
    this.#stop.abort();
    await this.#election;
    await this.#roster.stop();
    await this.#presence.stop();
    if (this.ownsConnection && !this.ctx.nc.isClosed()) {
      await this.ctx.nc.close().catch((err: unknown) => this.ctx.logger.warn({ err }, 'closing NATS failed'));
    }
    this.ctx.logger.info({}, 'hub stopped');
    this.#settleClosed(result);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
