import {
  ChannelState,
  isTerminalChannelState,
  type ChannelMetadata,
  type Envelope,
  CloseReason,
} from '@ag2net/protocol';
import { expireTasksOfChannel } from './task-ops.js';
import {
  SHORT_TAIL,
  Yielder,
  foldChannelTail,
  foldTailsInOnePass,
  prepareChannel,
  type RebuildDeps,
  type RebuildOptions,
  type Rebuilt,
} from './snapshot-rebuild.js';
import { SNAPSHOT_EVERY, channelOfOpenSnapshot, scanOpenSnapshots } from '../stores/snapshot-store.js';
import { detachedRuntime, type ChannelRuntime } from '../stores/channel-runtime.js';
import { holdRulesUnderCeilings } from './agent-ops.js';
import { malformedGlobs } from '../base/glob.js';
import { lastValues, type KvValue } from '../base/kv-scan.js';
import { SharedScan } from '../base/shared-scan.js';
import { beginCloseLocked, finishCloseLocked, settleHandshakeLocked, type CloseDeps } from './lifecycle.js';
import { recordAppended } from './append.js';
import { QuarantineLog } from './quarantine.js';
import { reconcileMetadata } from '../stores/reconcile.js';
import { mapLimit } from '../base/map-limit.js';
import type { HomeStores, HubEnv } from '../partition/hub-parts.js';
import type { PartitionPick } from '../partition/partition.js';

/** Channels rebuilt at once: their reads overlap, their folds take turns on the event loop. */
const CONCURRENCY = 32;

/** Up to this many channels with long tails are read by subject; more are read in one pass (`foldTailsInOnePass`). */
const MAX_LONG_BY_SUBJECT = 2;

/** What hydrate uses: the home stores it loads, the partition it rebuilds and whose interrupted work it finishes. */
export type HydrateDeps = RebuildDeps & CloseDeps & Pick<HubEnv, 'limits'> & PartitionPick<'serial' | 'owns' | 'index'>;

/** KV records as a pass streams them, or as a shared pass handed them over. */
type Records = AsyncIterable<KvValue> | Iterable<KvValue>;

/**
 * The passes over the channels and snapshots buckets that a hub's partitions share when they hydrate at about the
 * same time (a hub starting alone takes every partition at once): each bucket is read once for all of them, and each
 * partition keeps its own channels' records.
 */
export interface HydrateScans {
  readonly channels: SharedScan<KvValue>;
  readonly snapshots: SharedScan<KvValue>;
}

/** The hub's shared hydrate passes (`names` are the deployment's: the records go to their channels' partitions). */
export function hydrateScans(ctx: Pick<HubEnv, 'js' | 'jsm' | 'names'>): HydrateScans {
  const { js, jsm, names } = ctx;
  return {
    channels: new SharedScan({
      scan: () => lastValues({ js, jsm, bucket: names.channelsBucket }),
      groupOf: (record) => names.partitionOf(record.key),
    }),
    snapshots: new SharedScan({
      scan: () => scanOpenSnapshots({ js, jsm, bucket: names.snapshotsBucket }),
      groupOf: (record) => names.partitionOf(channelOfOpenSnapshot(record.key)),
    }),
  };
}

/** How one hydrate reads the buckets. */
export interface HydrateOptions {
  /**
   * The hub's shared passes; `null` (one partition) reads each bucket itself. Either way each pass starts after
   * hydrate was called, so after the partition's lease was acquired: nothing its previous owner wrote is missed.
   */
  readonly scans?: HydrateScans | null;
  /** Ends the wait for a shared pass (rejecting with its reason): the partition's term is ending. */
  readonly signal?: AbortSignal;
}

/**
 * Rebuilds the hub's state from NATS in time proportional to what is open, not to history: the registry, channel
 * metadata and tasks from KV; then each open channel from its snapshot and the channel's own WAL entries after it
 * (`rebuildChannel`: snapshots and entries that are not what the hub wrote are quarantined and skipped). Ended
 * channels are not folded: only their metadata is loaded, and their final snapshot serves them on demand
 * (`attached`). The WAL is the truth: handshake and lifecycle envelopes in it win over metadata that a crash left
 * stale. Channels whose history expired are tombstones: their metadata is loaded, nothing else (the `hydrated` line
 * counts them as `expiredHistories`). Then it finishes what a crash interrupted: closing channels resume their drain,
 * an `auto_close` violation whose close had not started starts it, and tasks of ended channels expire.
 */
export async function hydrate(ctx: HydrateDeps, reading: HydrateOptions = {}): Promise<void> {
  const quarantine = new QuarantineLog(ctx);
  ctx.partition.channels.clear();
  ctx.inboxes.clear();
  ctx.partition.snapshots.clear();
  // With one partition its hydrate loads the agents and tasks too; with several the hub follows them from its start
  // (`HomeReplica`), since every partition reads them and only the home partition's owner writes them.
  const home = ctx.names.partitions === 1;
  const { scans = null, signal } = reading;
  const where = { js: ctx.js, jsm: ctx.jsm };
  // Read as they stream, or this partition's part of the hub's shared passes (both asked for at once, so that they
  // join the same passes as the other partitions' hydrates).
  const [channelRecords, snapshotRecords]: readonly [Records, Records] =
    scans === null
      ? [
          ownRecords(ctx, lastValues({ ...where, bucket: ctx.names.channelsBucket })),
          scanOpenSnapshots({ ...where, bucket: ctx.names.snapshotsBucket }),
        ]
      : await Promise.all([
          scans.channels.take(ctx.partition.index, { signal }),
          scans.snapshots.take(ctx.partition.index, { signal }),
        ]);
  // The KV loads are independent; folding needs all of them (the registry for inbox limits).
  const [, , stored, snapshots] = await Promise.all([
    home ? ctx.registry.load(quarantine.note) : undefined,
    home ? ctx.tasks.load(quarantine.note) : undefined,
    ctx.partition.channels.loadMetadata(channelRecords, quarantine.note),
    ctx.partition.snapshots.loadOpen(snapshotRecords),
  ]);
  for (const channelId of snapshots.keys()) if (!ctx.partition.owns(channelId)) snapshots.delete(channelId);
  if (home) {
    holdRulesUnderCeilings(ctx);
    reportMalformedGlobs(ctx);
  }
  const open: ChannelMetadata[] = [];
  for (const metadata of stored) {
    if (!isTerminalChannelState(metadata.state)) open.push(metadata);
    else
      ctx.partition.channels.set(
        detachedRuntime(metadata, ctx.adapters.find(metadata.manifest.type, metadata.manifest.version) ?? null),
      );
  }
  const yielder = new Yielder();
  const fold = (rt: ChannelRuntime, envelope: Envelope, streamSeq: number): void => {
    recordAppended(ctx, rt, { envelope, streamSeq });
    reconcileMetadata(rt, envelope);
  };
  const options: RebuildOptions = {
    snapshots,
    quarantine: quarantine.note,
    fold,
    yielder,
    // What the snapshot's envelopes count in inboxes, as folding them would have counted it.
    onRestored: (rt) => ctx.inboxes.add(rt.inboxAdmitted),
  };
  const rebuilt = await mapLimit(open, CONCURRENCY, (metadata) => prepareChannel(ctx, metadata, options));
  // Short tails (a snapshot is rarely far behind) are read by subject; many long ones (channels without a snapshot,
  // as on the first start over a log written before snapshots) in one pass.
  const long = rebuilt.filter((r) => r.expected > SHORT_TAIL);
  const bySubject = long.length <= MAX_LONG_BY_SUBJECT ? rebuilt : rebuilt.filter((r) => r.expected <= SHORT_TAIL);
  await mapLimit(bySubject, CONCURRENCY, (r) => foldChannelTail(ctx, r, options));
  if (bySubject.length < rebuilt.length) await foldTailsInOnePass(ctx, long, options);
  for (const { rt } of rebuilt) ctx.partition.channels.set(rt);
  // Ended channels were not folded, so what they left unread in inboxes is not counted: ask before refusing.
  ctx.inboxes.distrustAll();
  await quarantine.flush();
  const consumer = await ctx.jsm.consumers.info(ctx.names.walStream, ctx.names.deliveryConsumer);
  ctx.partition.deliveredThrough = consumer.ack_floor.stream_seq;
  for (const { rt, lastSubstantive } of rebuilt) {
    if (!isTerminalChannelState(rt.metadata.state)) await resumeLifecycle(ctx, rt, lastSubstantive);
  }
  // With several partitions the home partition's owner expires tasks of ended channels (`expireTasksOfEndedChannels`).
  for (const task of home ? ctx.tasks.open() : []) {
    const channel = task.channel_id === null ? undefined : ctx.partition.channels.get(task.channel_id);
    if (channel !== undefined && isTerminalChannelState(channel.metadata.state)) {
      await expireTasksOfChannel(ctx, channel.metadata.channel_id);
    }
  }
  noteSnapshots(ctx, rebuilt);
  ctx.logger.info(
    {
      agents: ctx.registry.size,
      channels: stored.length,
      open: open.length,
      restored: rebuilt.filter((r) => r.restored).length,
      envelopes: rebuilt.reduce((n, r) => n + r.folded, 0),
      quarantined: ctx.counters.quarantined,
      // Ended channels whose history the retention removed: their metadata only, never a log to read.
      expiredHistories: ctx.partition.channels.expiredCount,
    },
    'hydrated',
  );
}

/**
 * Tells the snapshot store what hydrate found: a channel folded far past its snapshot (or without one) gets a new
 * snapshot now, so that the next hydrate is short; one with a short tail gets it once it is idle.
 */
function noteSnapshots(ctx: PartitionPick<'snapshots'>, rebuilt: readonly Rebuilt[]): void {
  for (const { rt, restored, folded } of rebuilt) {
    const channelId = rt.metadata.channel_id;
    const count = rt.streamSeqs.length;
    ctx.partition.snapshots.restored(channelId, restored ? count - folded : 0, folded);
    if (folded >= SNAPSHOT_EVERY || (!restored && count > 0) || isTerminalChannelState(rt.metadata.state)) {
      ctx.partition.snapshots.schedule(channelId);
    }
  }
}

/** The channel records of the partition's own channels (every record, with one partition). */
async function* ownRecords<T extends { readonly key: string }>(
  ctx: PartitionPick<'owns'>,
  records: AsyncIterable<T>,
): AsyncGenerator<T> {
  for await (const record of records) if (ctx.partition.owns(record.key)) yield record;
}

/**
 * Finishes what a crash interrupted: a channel with a fired `auto_close` violation, or whose last envelope ends it
 * per its adapter, starts closing; a closing channel whose envelopes are all delivered ends now (otherwise the
 * delivery consumer ends it). `last` is the last content envelope folded after the channel's snapshot: a snapshot
 * is written only after the hub acted on what it covers, so one before it was acted on already.
 */
async function resumeLifecycle(
  ctx: CloseDeps & PartitionPick<'serial'>,
  rt: ChannelRuntime,
  last: Envelope | undefined,
): Promise<void> {
  await ctx.partition.serial.run(rt.metadata.channel_id, async () => {
    const { autoClose } = rt.facts;
    // Every invitee answered, and the writer of the last answer did not get to open (or close) the channel.
    if (rt.metadata.state === ChannelState.Pending && rt.metadata.pending_acks.length === 0) {
      await settleHandshakeLocked(ctx, rt);
      return;
    }
    if (
      autoClose !== null &&
      (rt.metadata.state === ChannelState.Pending || rt.metadata.state === ChannelState.Active)
    ) {
      await beginCloseLocked(ctx, rt, autoClose);
      return;
    }
    if (rt.metadata.state === ChannelState.Active && last !== undefined && rt.adapter !== null && rt.state !== null) {
      const verdict = rt.adapter.onAccepted(rt.metadata, last, rt.state);
      if (verdict.nextState === ChannelState.Closing || verdict.nextState === ChannelState.Closed) {
        await beginCloseLocked(ctx, rt, verdict.autoCloseReason || CloseReason.ClosedByAdapter);
        return;
      }
    }
    if (rt.metadata.state === ChannelState.Closing) {
      rt.closingAt = rt.streamSeqs.length;
      if (ctx.partition.deliveredThrough >= rt.lastStreamSeq) await finishCloseLocked(ctx, rt);
    }
  });
}

/**
 * Logs each malformed glob of a loaded rule, once per hydrate: rules are validated when they are set, so only a rule
 * stored before that can hold one, and it matches nothing (`globMatch`).
 */
function reportMalformedGlobs(ctx: Pick<HubEnv, 'logger'> & Pick<HomeStores, 'registry'>): void {
  for (const record of ctx.registry.all()) {
    for (const { pattern, problem } of malformedGlobs(record.rule)) {
      ctx.logger.warn(
        { agentId: record.passport.agent_id, pattern, problem },
        'a stored rule holds a malformed glob; it matches nothing',
      );
    }
  }
}
