import { UnavailableError, type Health } from '@ag2net/protocol';
import type { PartitionView } from './assemble-hub.js';
import { callerDirectory } from './auth/credential-state.js';
import { buildHandlers } from './handlers.js';
import type { Assignment } from './lease/assignment.js';
import { backoffMs, pause, whileHeld } from './lease/lease-keeper.js';
import type { GoneWatch } from './lease/presence.js';
import { keepTermLease, untilTermEnds, type TermEnd } from './lease/term.js';
import { accessDirectory } from './operations/access.js';
import { Deliverer } from './operations/delivery.js';
import type { HomeReplica } from './operations/home-replica.js';
import { hydrate, type HydrateScans } from './operations/hydrate.js';
import { sweep } from './operations/sweep.js';
import { applyTaskEnds, expireTasksOfEndedChannels } from './operations/task-ops.js';
import type { ResolvedHubOptions } from './options.js';
import { RpcServer, type ReadThrough } from './rpc/rpc-server.js';
import { traceHandlers } from './rpc/traced-handlers.js';
import { SNAPSHOT_IDLE_MS } from './stores/snapshot-store.js';

/**
 * How often a standby looks at the lease, ms (at most; a third of a short lease when that is less): a released lease
 * is taken at once, and a holder whose connection is gone is probed at this pace (`GoneWatch`).
 */
const STANDBY_POLL_MS = 250;

/** The longest pause between two campaigns after failures, ms. */
const MAX_BACKOFF_MS = 5_000;

/** What a partition's runner works with besides its partition's view. */
export interface RunnerDeps {
  readonly opts: ResolvedHubOptions;
  /** Judges whether the holder of this partition's lease is dead (one per runner: it follows one holder). */
  readonly goneWatch: GoneWatch;
  /** Which hub should own which partition; `null` with one partition, where every hub campaigns. */
  readonly assignment: Assignment | null;
  /** Reads agents through to KV for a hub that follows the registry; `null` with one partition. */
  readonly replica: HomeReplica | null;
  /** The bucket passes the hub's partitions share when they hydrate together; `null` with one partition. */
  readonly scans: HydrateScans | null;
  /** The issuer account the identities' requests come from; `null` on a hub that issues no credentials. */
  readonly importAccount: string | null;
  /** The hub's health, for the `health` operation. */
  readonly health: () => Health;
  /** Told when this partition starts and stops serving. */
  readonly onServing: (serving: boolean) => void;
}

/**
 * One partition's life in one hub: it campaigns for the partition's lease (with several partitions, only while the
 * assignment says this hub should own it), and for each term it wins hydrates the partition, starts its delivery,
 * serves its operations (and, for partition 0, the home operations), sweeps its channels, and steps down when the
 * term ends: the lease lost, a required loop ended, the hub closing, or a hand-over to the partition's preferred owner.
 */
export class PartitionRunner {
  readonly index: number;
  readonly #rpc: RpcServer;
  readonly #deliverer: Deliverer;
  #serving = false;
  /** Ends the current term (a hand-over, or the hub closing). */
  #termAbort: AbortController | null = null;
  #timers: NodeJS.Timeout[] = [];
  #term = 0;

  constructor(
    private readonly view: PartitionView,
    private readonly deps: RunnerDeps,
  ) {
    this.index = view.partition.index;
    const { replica } = deps;
    this.#rpc = new RpcServer(view.nc, view.names, {
      logger: view.logger,
      serving: () => view.partition.lease.holds(),
      importAccount: deps.importAccount,
      registration: deps.opts.registrationLimits,
      partition: { index: this.index, home: this.index === 0 },
      outbox: view.outbox,
      ...(replica === null ? {} : { readThrough: (refs: ReadThrough) => replica.ensure(refs) }),
    });
    this.#rpc.observe(view.observer);
    this.#deliverer = new Deliverer(view);
  }

  /** Whether this partition is being served now. */
  get serving(): boolean {
    return this.#serving;
  }

  get epoch(): number {
    return this.#serving ? this.view.partition.epoch : 0;
  }

  /**
   * Tries for the lease until `signal` aborts: serves each term it wins, and after a term ends steps down, releases
   * what it holds and tries again. Failures back off (bounded, jittered); a lease held by another hub is retried often,
   * since a released lease is free at once.
   */
  async campaign(signal: AbortSignal): Promise<void> {
    const retryMs = Math.min(1000, Math.max(50, Math.floor(this.deps.opts.leaseTtlMs / 3)));
    const standbyMs = Math.min(retryMs, STANDBY_POLL_MS);
    const { lease } = this.view.partition;
    let failures = 0;
    while (!signal.aborted) {
      if (this.deps.assignment !== null && !this.deps.assignment.prefers(this.index)) {
        await pause(standbyMs, signal);
        continue;
      }
      let epoch: number | null = null;
      try {
        epoch = (await lease.tryAcquire()) ?? (await this.#takeOverFromGone());
      } catch (err) {
        failures += 1;
        this.view.logger.warn({ err, failures }, 'lease attempt failed');
        await pause(backoffMs(failures, retryMs, MAX_BACKOFF_MS), signal);
        continue;
      }
      if (epoch === null) {
        failures = 0; // the lease bucket answered: another hub holds the lease
        await pause(backoffMs(0, standbyMs, standbyMs), signal);
        continue;
      }
      const end = await this.#serveTerm(epoch, signal);
      failures = end === 'failed' ? failures + 1 : 0;
      if (end !== 'closed') await pause(backoffMs(failures, retryMs, MAX_BACKOFF_MS), signal);
    }
  }

  /**
   * Hands the partition over: ends the current term as a graceful step-down (admitted work finishes, snapshots are
   * written, delivery stops, the lease is released), after which the campaign waits until the assignment says this
   * hub should own the partition again. Resolves once the lease is released.
   */
  async handOver(): Promise<void> {
    const abort = this.#termAbort;
    if (abort === null) return;
    const done = new Promise<void>((resolve) => this.#released.push(resolve));
    abort.abort();
    await done;
  }

  #released: (() => void)[] = [];

  /**
   * Takes the lease over from the hub that holds it once that hub is dead: its connection seen gone for
   * `GONE_CONFIRM_MS` (`GoneWatch`; with several partitions, the assignment's probes). A holder that is only paused
   * keeps its connection, so its lease is waited out. `null` while the holder is connected, or when the key moved
   * meanwhile.
   */
  async #takeOverFromGone(): Promise<number | null> {
    const { lease } = this.view.partition;
    const holder = lease.observedHolder();
    if (holder === null || holder.hubId === this.deps.opts.hubId) return null;
    const { assignment } = this.deps;
    const dead =
      assignment === null ? await this.deps.goneWatch.confirmedGone(holder) : assignment.connectionGone(holder.hubId);
    if (!dead) return null;
    const epoch = await lease.takeOver(holder);
    if (epoch !== null) {
      this.view.logger.warn({ from: holder.hubId, epoch }, 'took the lease over from a hub whose connection is gone');
    }
    return epoch;
  }

  /** One term: keep the lease from now on, hydrate, serve until the term ends, step down. Never throws. */
  async #serveTerm(epoch: number, stop: AbortSignal): Promise<TermEnd> {
    const term = ++this.#term;
    const abort = new AbortController();
    this.#termAbort = abort;
    const onStop = (): void => abort.abort();
    stop.addEventListener('abort', onStop, { once: true });
    const { view } = this;
    const { partition } = view;
    let end: TermEnd = 'failed';
    let keeper: Promise<'lost' | 'stopped'> = Promise.resolve('stopped');
    /** What the term was doing, for the log when it fails. */
    let phase = 'starting';
    try {
      if (stop.aborted) return (end = 'closed');
      partition.epoch = epoch;
      phase = 'reading the lease period';
      ({ keeper } = await keepTermLease({
        lease: partition.lease,
        leases: view.resources.leases,
        leaseTtlMs: this.deps.opts.leaseTtlMs,
        epoch,
        logger: view.logger,
        signal: abort.signal,
      }));
      let keeperResult: 'lost' | 'stopped' | null = null;
      void keeper.then((r) => (keeperResult = r));
      view.logger.info({ epoch, term }, 'lease acquired; hydrating');
      phase = 'hydrating';
      try {
        await hydrate(view, { scans: this.deps.scans, signal: abort.signal });
      } catch (err) {
        // Left the wait for a shared pass: the term ends (below), as it would after a hydrate that finished.
        if (!abort.signal.aborted) throw err;
      }
      if (keeperResult === 'lost') return (end = 'lost');
      if (abort.signal.aborted) return (end = 'closed');
      phase = 'starting delivery';
      await this.#deliverer.start();
      // Serving from here on: the health the RPC answers as soon as it subscribes names this partition.
      this.#serving = true;
      phase = 'starting rpc';
      this.#rpc.start(
        traceHandlers(buildHandlers(view, this.deps.health)),
        accessDirectory(view),
        callerDirectory(view),
      );
      // The server knows the RPC subscriptions once a flush returns: "serving" means requests find a responder.
      await view.nc.flush();
      phase = 'serving';
      this.#startSweeper();
      this.#timers.push(setInterval(() => partition.snapshots.flushIdle(), SNAPSHOT_IDLE_MS / 2));
      view.logger.info({ epoch, term }, 'active');
      this.deps.onServing(true);
      end = await untilTermEnds({
        keeper,
        signal: abort.signal,
        logger: view.logger,
        loops: [
          { what: 'rpc subscription', done: this.#rpc.closed() },
          { what: 'delivery consumer', done: this.#deliverer.closed() },
        ],
      });
    } catch (err) {
      view.logger.error({ err, epoch, term, phase }, 'term failed; stepping down');
      end = abort.signal.aborted ? 'closed' : 'failed';
    } finally {
      abort.abort();
      this.#termAbort = null;
      stop.removeEventListener('abort', onStop);
      await this.#stepDown();
      await keeper;
      if (end !== 'lost') {
        await partition.lease.release().catch((err: unknown) => view.logger.warn({ err }, 'lease release failed'));
      }
      if (end === 'lost') view.logger.error({ epoch, term }, 'lease lost; stepped down');
      for (const resolve of this.#released.splice(0)) resolve();
    }
    // A hand-over ends the term as the hub's close does, but the campaign goes on.
    return stop.aborted ? 'closed' : end === 'closed' ? 'lost' : end;
  }

  #startSweeper(): void {
    if (this.deps.opts.sweepIntervalMs <= 0) return;
    this.#timers.push(
      setInterval(
        () => void this.tick().catch((err: unknown) => this.view.logger.error({ err }, 'sweep failed')),
        this.deps.opts.sweepIntervalMs,
      ),
    );
  }

  /**
   * Stops serving: no new requests, admitted work finishes, delivery stops, waiters learn to retry. Each step runs
   * even when an earlier one fails, and none throws: a step-down must always complete.
   */
  async #stepDown(): Promise<void> {
    for (const t of this.#timers.splice(0)) clearInterval(t);
    const wasServing = this.#serving;
    this.#serving = false;
    if (wasServing) this.deps.onServing(false);
    const { partition, logger } = this.view;
    const step = async (what: string, run: () => Promise<void>): Promise<void> => {
      try {
        await run();
      } catch (err) {
        logger.warn({ err, what }, 'step-down step failed');
      }
    };
    await step('rpc', () => this.#rpc.stop());
    // While the lease still holds, admitted work finishes and every channel's snapshot catches up (so that the
    // successor's hydrate is short), and delivery fans out what that work appends. Once the lease is gone a successor
    // may serve: delivery stops at once, whatever work is still waiting on NATS (its writes are refused now), so that
    // two hubs never pull the delivery consumer together.
    if (partition.lease.holds()) {
      partition.snapshots.flushIdle(0);
      await step('serial', () => whileHeld(partition.lease, partition.serial.idle()));
      await step('snapshots', () => whileHeld(partition.lease, partition.snapshots.idle()));
    }
    await step('delivery', () => this.#deliverer.stop());
    await step('serial', () => partition.serial.idle());
    await step('snapshots', () => partition.snapshots.idle());
    partition.waiters.abort(new UnavailableError('the hub stepped down; retry'));
    // A partition another hub may own from now on: what this hub knew of it goes (its next term hydrates it again),
    // so that counts and memory are of the partitions it serves.
    if (this.deps.assignment !== null) {
      partition.channels.clear();
      partition.snapshots.clear();
      partition.inboxes.clear();
    }
  }

  /** One sweep of this partition's channels (and, on the home partition of several, of the tasks' channels). */
  async tick(): Promise<void> {
    if (!this.#serving || !this.view.partition.lease.holds()) return;
    await sweep(this.view);
    if (this.index === 0 && this.deps.assignment !== null) {
      await applyTaskEnds(this.view);
      await expireTasksOfEndedChannels(this.view);
    }
  }
}
