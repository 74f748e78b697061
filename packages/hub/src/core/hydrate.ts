import { ChannelState, isTerminalChannelState, type Envelope, CloseReason } from '@ag2net/protocol';
import { setImmediate } from 'node:timers/promises';
import { countsTowardInbox } from '../governance/inbox-counters.js';
import { expireTasksOfChannel } from '../tasks/task-ops.js';
import { newRuntime, type ChannelRuntime } from './channel-runtime.js';
import { holdRulesUnderCeilings } from './agent-ops.js';
import type { HubContext } from './context.js';
import { beginCloseLocked, finishCloseLocked, recordAppended } from './lifecycle.js';
import { QuarantineLog, type Quarantine } from './quarantine.js';
import { reconcileMetadata } from './reconcile.js';
import { checkWalMessage, scanWal, type RawWalMessage } from './wal-scan.js';

/** Longest stretch of folding without a turn of the event loop, ms: the lease is renewed during hydrate. */
const YIELD_EVERY_MS = 50;

/**
 * Rebuilds the hub's whole state from NATS alone: the registry, channel metadata and tasks from KV, then one pass
 * over the WAL (records the hub did not write are quarantined and skipped: see `foldable`) that folds every channel's adapter state, expectation facts (fired violations included) and indexes,
 * and the inbox pending counts. The WAL is the truth: handshake and lifecycle envelopes in it win over metadata that
 * a crash left stale. Then it finishes what a crash interrupted: closing channels resume their drain, an
 * `auto_close` violation whose close had not started starts it, and tasks of ended channels expire.
 */
export async function hydrate(ctx: HubContext): Promise<void> {
  const quarantine = new QuarantineLog(ctx);
  ctx.channels.clear();
  ctx.inboxes.clear();
  // The three KV loads are independent; the WAL pass needs all of them (the registry for inbox limits).
  const [, , stored] = await Promise.all([
    ctx.registry.load(quarantine.note),
    ctx.tasks.load(quarantine.note),
    ctx.channels.loadMetadata(quarantine.note),
  ]);
  holdRulesUnderCeilings(ctx);
  for (const metadata of stored) {
    const adapter = ctx.adapters.find(metadata.manifest.type, metadata.manifest.version) ?? null;
    let state = null;
    try {
      state = adapter?.initialState(metadata) ?? null;
    } catch (err) {
      ctx.logger.error({ err, channelId: metadata.channel_id }, 'stored channel has knobs its adapter rejects');
    }
    ctx.channels.set(newRuntime(metadata, adapter, state));
  }
  const lastSubstantive = new Map<string, Envelope>();
  let count = 0;
  const info = await ctx.jsm.streams.info(ctx.names.walStream);
  const scan = scanWal(ctx.js, ctx.names, {
    subject: ctx.names.walAll,
    fromStreamSeq: 1,
    toStreamSeq: info.state.last_seq,
  });
  let lastYield = performance.now();
  for await (const raw of scan) {
    // Messages already buffered are folded without returning to the event loop; give timers (lease renewal) a turn.
    if (performance.now() - lastYield > YIELD_EVERY_MS) {
      await setImmediate();
      lastYield = performance.now();
    }
    const envelope = foldable(ctx, raw, quarantine.note);
    if (envelope === null) continue;
    const rt = ctx.channels.require(envelope.channel_id);
    recordAppended(ctx, rt, envelope, raw.streamSeq);
    reconcileMetadata(rt, envelope);
    if (countsTowardInbox(envelope)) lastSubstantive.set(rt.metadata.channel_id, envelope);
    count += 1;
  }
  await quarantine.flush();
  const consumer = await ctx.jsm.consumers.info(ctx.names.walStream, ctx.names.deliveryConsumer);
  ctx.deliveredThrough = consumer.ack_floor.stream_seq;
  for (const rt of ctx.channels.open()) await resumeLifecycle(ctx, rt, lastSubstantive.get(rt.metadata.channel_id));
  for (const task of ctx.tasks.open()) {
    const channel = task.channel_id === null ? undefined : ctx.channels.get(task.channel_id);
    if (channel !== undefined && isTerminalChannelState(channel.metadata.state)) {
      await expireTasksOfChannel(ctx, channel.metadata.channel_id);
    }
  }
  ctx.logger.info(
    {
      agents: ctx.registry.size,
      channels: ctx.channels.all().length,
      envelopes: count,
      quarantined: ctx.counters.quarantined,
    },
    'hydrated',
  );
}

/**
 * The envelope of a WAL message if the hub wrote it: the hub's headers, a valid envelope on its channel's subject,
 * a channel with metadata, and the channel's next sequence. Anything else is quarantined and not folded; a message
 * on a known channel's subject still moves that channel's tail, since the next append is checked against the tail.
 */
function foldable(ctx: HubContext, raw: RawWalMessage, quarantine: Quarantine): Envelope | null {
  const reject = (reason: string): null => {
    const rt = ctx.channels.get(raw.subject.slice(ctx.names.wal('').length));
    if (rt !== undefined && raw.subject === ctx.names.wal(rt.metadata.channel_id)) rt.lastStreamSeq = raw.streamSeq;
    quarantine({ source: 'wal', key: raw.subject, seq: raw.streamSeq, reason });
    return null;
  };
  const checked = checkWalMessage(ctx.names, raw);
  if (!checked.ok) return reject(checked.reason);
  const { envelope } = checked;
  const rt = ctx.channels.get(envelope.channel_id);
  if (rt === undefined) return reject(`no metadata for channel ${envelope.channel_id}`);
  const expected = rt.streamSeqs.length + 1;
  if (envelope.sequence !== expected) {
    return reject(`sequence ${envelope.sequence ?? 'none'} where the channel's next is ${expected}`);
  }
  return envelope;
}

/**
 * Finishes what a crash interrupted: a channel with a fired `auto_close` violation, or whose last envelope ends it
 * per its adapter, starts closing; a closing channel whose envelopes are all delivered ends now (otherwise the
 * delivery consumer ends it).
 */
async function resumeLifecycle(ctx: HubContext, rt: ChannelRuntime, last: Envelope | undefined): Promise<void> {
  await ctx.serial.run(rt.metadata.channel_id, async () => {
    const { autoClose } = rt.facts;
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
      if (ctx.deliveredThrough >= rt.lastStreamSeq) await finishCloseLocked(ctx, rt);
    }
  });
}
