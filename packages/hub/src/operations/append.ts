import { repr } from '@ag2net/protocol/internal';
import {
  Ag2netError,
  ConflictError,
  ErrorCode,
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_EXPIRED,
  ProtocolError,
  UnavailableError,
  isTerminalChannelState,
  type Envelope,
  type HubNames,
} from '@ag2net/protocol';
import { isoAt } from '../base/clock.js';
import { WalConflictError, isTransient, type AppendResult } from '../nats/wal.js';
import { applyAppended, type ChannelRuntime } from '../stores/channel-runtime.js';
import { auditQuarantined, type QuarantineDeps } from './quarantine.js';
import { reconcileMetadata } from '../stores/reconcile.js';
import { checkWalMessage, getWalRange, lastWalMessage, type Checked, type RawWalMessage } from './wal-scan.js';
import { channelFields } from '../base/log-names.js';
import type { HubEnv, HomeStores, HubPolicies } from '../partition/hub-parts.js';
import type { PartitionPick } from '../partition/partition.js';

/**
 * How many times one append reads the channel's new tail and tries again. Each round folds whatever another writer
 * appended and skips what no hub wrote; only a deposed hub that still had requests queued can append, so a handful of
 * rounds suffices unless someone keeps writing onto the channel's subject, which then gets `UnavailableError`.
 */
const MAX_CATCH_UP_ROUNDS = 8;

/**
 * How many records the hub did not write one append skips (quarantines) before it gives up with `UnavailableError`.
 * Each skip costs a leader read and an audit write while the channel's serial slot is held, so a flood of foreign
 * records must not hold one post (and the channel behind it) for ever. What was skipped stays skipped: the client's
 * retry goes on from there, so a finite flood is worked through by retries, a few dozen records per attempt.
 */
export const MAX_SKIPS_PER_APPEND = 64;

/**
 * Re-checks a draft against the channel after entries of another writer were folded into it; throws the error the
 * sender gets when the draft no longer fits (the channel closed, the turn moved on).
 */
export type Recheck = (rt: ChannelRuntime) => void;

/** What `appendLocked` and `appendOnce` append: the envelope to stamp, and how to re-check it after a catch-up. */
export interface AppendRequest {
  /** The envelope to append; its id, `created_at` and `sequence` are stamped here (an empty id gets a new one). */
  readonly draft: Envelope;
  /** Re-checks the draft after another writer's entries were folded; default: the channel has not ended. */
  readonly recheck?: Recheck;
}

/** What folding an appended envelope into the hub's state uses: the inbox counts and their agents' limits. */
export type RecordDeps = Pick<HomeStores, 'registry'> & Pick<HubPolicies, 'inboxes'>;

/** What reading and folding what another writer appended uses. */
export type CatchUpDeps = RecordDeps &
  QuarantineDeps &
  Pick<HubEnv, 'names' | 'jsm'> &
  PartitionPick<'snapshots' | 'epoch'>;

/** What appending to a channel's WAL uses: the partition's writer, fenced by its lease and stamped with its epoch. */
export type AppendDeps = CatchUpDeps & Pick<HubEnv, 'clock' | 'ids'> & PartitionPick<'writer' | 'epoch' | 'lease'>;

/**
 * Stamps and appends an envelope to its channel's WAL, then records and folds it; returns the envelope as stored.
 * The caller holds the channel's serial slot (`ctx.partition.serial.run(channelId, …)`); within this hub nothing else
 * appends.
 *
 * The writer appends only while this hub holds the lease, after the channel's last entry it knows. When the WAL says
 * someone else appended since (a deposed hub that woke from a pause), the channel's new entries are read and folded
 * exactly as hydrate would (they were acked to their senders and stay), the draft is re-checked against the new
 * state (`recheck`, default: the channel has not ended) and appended after them with the next sequence. When the
 * new entries hold this very envelope (a retried publish that was stored, or the same post admitted by the other
 * writer) that entry is the result. Records among them that no hub wrote as the channel's next envelope (anyone's
 * message published onto the subject) are quarantined, take no sequence and are never folded, the same ones hydrate
 * skips. So sequences stay unique and gap-free and live state equals the fold.
 */
export async function appendLocked(ctx: AppendDeps, rt: ChannelRuntime, request: AppendRequest): Promise<Envelope> {
  return (await appendOnce(ctx, rt, request)).envelope;
}

/**
 * What `appendOnce` did: `fresh` is false when the envelope was already admitted before (folded by this hub, or
 * written by another writer), in which case its stored copy is returned.
 */
export interface Appended {
  readonly envelope: Envelope;
  readonly fresh: boolean;
}

/**
 * `appendLocked`, telling a fresh append from an envelope found already stored (a retry whose first attempt was
 * admitted, by this hub or another writer), so that the caller does not act on it twice.
 */
export async function appendOnce(ctx: AppendDeps, rt: ChannelRuntime, request: AppendRequest): Promise<Appended> {
  const { draft, recheck = notEnded } = request;
  const nowMs = ctx.clock.now();
  const envelopeId = draft.envelope_id === '' ? ctx.ids(nowMs) : draft.envelope_id;
  const createdAt = isoAt(nowMs);
  const budget: SkipBudget = { left: MAX_SKIPS_PER_APPEND };
  for (let round = 0; ; round += 1) {
    const envelope: Envelope = {
      ...draft,
      envelope_id: envelopeId,
      created_at: createdAt,
      sequence: rt.streamSeqs.length + 1,
    };
    let result: AppendResult;
    try {
      result = await ctx.partition.writer.append(envelope, {
        expectedLast: rt.lastStreamSeq,
        epoch: ctx.partition.epoch,
        mayWrite: () => ctx.partition.lease.holds(),
      });
    } catch (err) {
      if (!(err instanceof WalConflictError)) throw err;
      if (round >= MAX_CATCH_UP_ROUNDS) {
        throw new UnavailableError(`channel ${repr(rt.metadata.channel_id)} keeps moving under this hub; retry`, {
          cause: err,
        });
      }
      const stored = await catchUpOrUnavailable(ctx, rt, { mine: envelope, budget });
      if (stored !== null) return ownOrNot(ctx, stored);
      recheck(rt);
      continue;
    }
    if (result.kind === 'appended') {
      record(ctx, rt, { envelope, streamSeq: result.streamSeq });
      return { envelope, fresh: true };
    }
    // This very envelope was stored before (the dedupe window answered). Already folded: an earlier admission.
    if (result.entry.streamSeq <= rt.lastStreamSeq) return { envelope: result.entry.envelope, fresh: false };
    const stored = await catchUpOrUnavailable(ctx, rt, { mine: envelope, budget });
    return ownOrNot(ctx, stored ?? { envelope: result.entry.envelope, epoch: result.entry.epoch() });
  }
}

/** An envelope found already stored, with the epoch it was written under. */
interface StoredCopy {
  readonly envelope: Envelope;
  readonly epoch: number | null;
}

/**
 * A stored copy written under this hub's own epoch and not yet folded is this hub's own append whose ack never came
 * back (a timed-out attempt, or a call that failed after storing): nothing acted on it yet, so it is fresh. A copy
 * another writer stored was acted on by that writer.
 */
function ownOrNot(ctx: PartitionPick<'epoch'>, stored: StoredCopy): Appended {
  return { envelope: stored.envelope, fresh: stored.epoch === ctx.partition.epoch };
}

/** Thrown by a re-check to say that another writer already did what the draft was for. Code `conflict`; never leaves. */
class AlreadyDone extends Ag2netError {
  override readonly name = 'AlreadyDone';
  constructor() {
    super(ErrorCode.Conflict, 'another writer already did it');
  }
}

/**
 * Appends a lifecycle envelope the hub writes (`ag2.channel.opened`, `ag2.channel.closed`, …) unless the entries of
 * another writer folded on the way show it already happened (`done`); then returns `null` and appends nothing, so a
 * channel never gets its lifecycle envelope twice.
 */
export async function appendUnlessDone(
  ctx: AppendDeps,
  rt: ChannelRuntime,
  request: { readonly draft: Envelope; readonly done: (rt: ChannelRuntime) => boolean },
): Promise<Envelope | null> {
  const { draft, done } = request;
  try {
    const recheck: Recheck = (now) => {
      if (done(now)) throw new AlreadyDone();
      notEnded(now);
    };
    return await appendLocked(ctx, rt, { draft, recheck });
  } catch (err) {
    if (err instanceof AlreadyDone) return null;
    throw err;
  }
}

/**
 * What the hub does with every envelope in a WAL, live after an append and on hydrate in log order: update the
 * channel (indexes, adapter state, expectation facts) and the inbox pending counts.
 */
export function recordAppended(ctx: RecordDeps, rt: ChannelRuntime, entry: WalEntry): void {
  const { envelope, streamSeq } = entry;
  applyAppended(rt, envelope, streamSeq);
  ctx.inboxes.count(envelope, rt, (id) => {
    const inbox = ctx.registry.get(id)?.rule.limits.inbox;
    return inbox === undefined ? null : { maxPending: inbox.max_pending, highWater: inbox.high_water };
  });
  // An ended channel no longer counts in anyone's inbox (see `InboxCounters`): the same live and on hydrate.
  if (envelope.event_type === EV_CHANNEL_CLOSED || envelope.event_type === EV_CHANNEL_EXPIRED) {
    ctx.inboxes.release(rt.inboxAdmitted);
    rt.inboxAdmitted.clear();
  }
}

/** An envelope as its channel's WAL holds it, at its stream sequence. */
export interface WalEntry {
  readonly envelope: Envelope;
  readonly streamSeq: number;
}

function record(ctx: RecordDeps & PartitionPick<'snapshots'>, rt: ChannelRuntime, entry: WalEntry): void {
  recordAppended(ctx, rt, entry);
  ctx.partition.snapshots.afterAppend(rt);
}

/**
 * What one catch-up looks for (the envelope being appended; `null` for a catch-up of its own) and may still skip
 * (its append's budget).
 */
interface CatchUpOf {
  readonly mine: Envelope | null;
  readonly budget: SkipBudget;
}

/** How many records a catch-up of its own (`catchUpLocked`) skips before it answers `unavailable`. */
const MAX_SKIPS_PER_CATCH_UP = 64;

/**
 * Folds what another writer appended to the channel after the last entry this hub knows (a deposed owner's late
 * append that the WAL accepted as a correct continuation): before the hub acts on a channel's state without
 * appending, as a sweep timing out a handshake does, so that it does not act on a state the log has left behind.
 * Returns how many entries it folded. Locked.
 */
export async function catchUpLocked(ctx: CatchUpDeps, rt: ChannelRuntime): Promise<number> {
  const before = rt.streamSeqs.length;
  await catchUpOrUnavailable(ctx, rt, { mine: null, budget: { left: MAX_SKIPS_PER_CATCH_UP } });
  return rt.streamSeqs.length - before;
}

/** What is left of one append's `MAX_SKIPS_PER_APPEND`, shared by its catch-up rounds. */
interface SkipBudget {
  left: number;
}

/**
 * `catchUp`, with a read the WAL could not serve (a timeout or 503 while the stream elects a leader) answered
 * `UnavailableError`, which clients retry: what was folded before it stays folded, and the retry goes on from there.
 */
async function catchUpOrUnavailable(ctx: CatchUpDeps, rt: ChannelRuntime, of: CatchUpOf): Promise<StoredCopy | null> {
  try {
    return await catchUp(ctx, rt, of);
  } catch (err) {
    if (!isTransient(err)) throw err;
    throw new UnavailableError(`the WAL of channel ${repr(rt.metadata.channel_id)} could not be read now; retry`, {
      cause: err,
    });
  }
}

/**
 * Reads the channel's entries after the last one this hub knows, through the current tail, and folds each that is
 * the channel's next envelope (hydrate's test, `nextEntry`; lifecycle envelopes included); anything else is
 * quarantined (counted and audited once, whichever path of this hub found it first), takes no sequence and only moves
 * the tail, so that the next append goes after it. Nothing read here is trusted before that test: the tail is read
 * raw, never parsed. Writes stamped with another lease epoch are logged and counted. Returns the stored copy of
 * `mine` when it is among them; throws `ConflictError` when its id was taken by another sender, and
 * `UnavailableError` once the append's skip budget is spent (what was skipped stays skipped).
 */
async function catchUp(ctx: CatchUpDeps, rt: ChannelRuntime, of: CatchUpOf): Promise<StoredCopy | null> {
  const { mine, budget } = of;
  const channelId = rt.metadata.channel_id;
  const subject = ctx.names.wal(channelId);
  const tail = await lastWalMessage(ctx.jsm, ctx.names, subject);
  const range = { subject, fromStreamSeq: rt.lastStreamSeq + 1, toStreamSeq: tail?.streamSeq ?? 0 };
  let stored: StoredCopy | null = null;
  let taken = false;
  for await (const raw of getWalRange(ctx.jsm, ctx.names, range)) {
    const checked = nextEntry(ctx.names, rt, raw);
    if (!checked.ok) {
      if (budget.left <= 0) {
        throw new UnavailableError(
          `channel ${repr(channelId)} has more records the hub did not write than one post skips; retry`,
        );
      }
      budget.left -= 1;
      ctx.logger.warn(
        { ...channelFields(rt.metadata), streamSeq: raw.streamSeq },
        'quarantined a WAL record the hub did not write; skipping it',
      );
      rt.lastStreamSeq = raw.streamSeq;
      await auditQuarantined(ctx, { source: 'wal', key: subject, seq: raw.streamSeq, reason: checked.reason });
      continue;
    }
    const { envelope } = checked;
    const epoch = Number(raw.epoch);
    if (epoch !== ctx.partition.epoch) {
      ctx.counters.foreignWrites += 1;
      ctx.logger.warn(
        { ...channelFields(rt.metadata), streamSeq: raw.streamSeq, epoch, ownEpoch: ctx.partition.epoch },
        'folded an entry another writer appended',
      );
    }
    record(ctx, rt, { envelope, streamSeq: raw.streamSeq });
    reconcileMetadata(rt, envelope);
    if (mine !== null && envelope.envelope_id === mine.envelope_id) {
      if (envelope.sender_id === mine.sender_id) stored = { envelope, epoch };
      else taken = true;
    }
  }
  if (stored !== null) return stored;
  if (taken) {
    throw new ConflictError(`envelope_id ${repr(mine?.envelope_id)} is already taken in channel ${repr(channelId)}`);
  }
  return null;
}

/**
 * The envelope of a WAL message of the channel if the hub wrote it as the channel's next, by the test hydrate folds
 * by (`snapshot-rebuild.ts`), so that the live hub and a cold one fold and skip the same records: what
 * `checkWalMessage` checks (the hub's epoch and sequence headers, a valid envelope on its own channel's subject,
 * header and envelope sequence agree), and the sequence is the channel's next. Otherwise why not.
 */
export function nextEntry(names: HubNames, rt: ChannelRuntime, raw: RawWalMessage): Checked {
  const checked = checkWalMessage(names, raw);
  if (!checked.ok) return checked;
  const expected = rt.streamSeqs.length + 1;
  if (checked.envelope.sequence !== expected) {
    return {
      ok: false,
      reason: `sequence ${checked.envelope.sequence ?? 'none'} where the channel's next is ${expected}`,
    };
  }
  return checked;
}

/** The default re-check: a channel that ended while another writer appended takes nothing more. */
function notEnded(rt: ChannelRuntime): void {
  const { state, channel_id: channelId } = rt.metadata;
  if (isTerminalChannelState(state)) throw new ProtocolError(`channel ${repr(channelId)} is ${state}`);
}
