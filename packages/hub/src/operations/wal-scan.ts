import { WalHeader, formatIssues } from '@ag2net/protocol/internal';
import { EnvelopeSchema, type Envelope, type HubNames } from '@ag2net/protocol';
import {
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type StoredMsg,
} from '@nats-io/jetstream';
import { batchDirectReader, type DirectBatchReader } from '../nats/batch-direct-get.js';
import type { ChannelRuntime } from '../stores/channel-runtime.js';
import { reasonOf } from './quarantine.js';

/** A WAL message as stored, before anything is trusted about it. */
export interface RawWalMessage {
  readonly subject: string;
  readonly streamSeq: number;
  readonly data: string;
  /** Header `Ag2-Epoch`, `null` when absent. */
  readonly epoch: string | null;
  /** Header `Ag2-Sequence`, `null` when absent. */
  readonly sequence: string | null;
}

/** Options of `scanWal`. */
export interface ScanOptions {
  /** The subject filter: one channel's subject, or the whole WAL. */
  readonly subject: string;
  /** The first stream sequence to read. */
  readonly fromStreamSeq: number;
  /** The last stream sequence to read: the scan ends there (the caller learned it before, so it never waits). */
  readonly toStreamSeq: number;
}

/**
 * Reads WAL messages raw with an ordered consumer, from `fromStreamSeq` through `toStreamSeq`, so that the caller
 * decides what to trust (a message that is no envelope does not end the scan). Yields nothing when the range is empty.
 */
export async function* scanWal(
  js: JetStreamClient,
  names: HubNames,
  options: ScanOptions,
): AsyncGenerator<RawWalMessage> {
  if (options.toStreamSeq < options.fromStreamSeq) return;
  const consumer = await js.consumers.get(names.walStream, {
    filter_subjects: options.subject,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: options.fromStreamSeq,
  });
  const messages = await consumer.consume({ max_messages: 1000 });
  try {
    for await (const m of messages) {
      if (m.seq > options.toStreamSeq) break;
      yield rawOf(m);
      if (m.seq >= options.toStreamSeq || m.info.pending === 0) break;
    }
  } finally {
    messages.stop();
    await consumer.delete().catch(() => undefined);
  }
}

/**
 * The last WAL message on `subject` (one channel's), read from the stream leader, or `null` when the channel has none.
 */
export async function lastWalMessage(
  jsm: JetStreamManager,
  names: HubNames,
  subject: string,
): Promise<RawWalMessage | null> {
  const m = await jsm.streams.getMessage(names.walStream, { last_by_subj: subject });
  return m === null ? null : storedRawOf(m);
}

/** The WAL message at a stream sequence (whatever its subject), or `null`. */
export async function walMessageAt(
  jsm: JetStreamManager,
  names: HubNames,
  streamSeq: number,
): Promise<RawWalMessage | null> {
  const m = await jsm.streams.getMessage(names.walStream, { seq: streamSeq });
  return m === null ? null : storedRawOf(m);
}

/**
 * Messages asked for per batch direct get of `getWalRange`. The server sends a batch in one burst, holding the
 * stream's read isolation while it does, and the reader buffers the whole answer before yielding any of it, so the
 * batch is bounded; 256 covers hydrate's short tails (`SHORT_TAIL`) and a writer's catch-up in one request, and for
 * longer ranges one round trip per 256 envelopes is already small next to parsing and folding them.
 */
export const WAL_RANGE_BATCH = 256;

/**
 * `scanWal` for a short range of one subject, with no consumer to create, which is cheaper for the few envelopes
 * after a channel's snapshot: batch direct gets of up to `WAL_RANGE_BATCH` messages on a server that has them
 * (nats-server 2.11+, `hasBatchDirectGet`), else one leader read per message (`next_by_subj`). Throws what those
 * reads throw (a timeout, no responders, a 503), after yielding what was read before.
 */
export async function* getWalRange(
  jsm: JetStreamManager,
  names: HubNames,
  options: ScanOptions,
): AsyncGenerator<RawWalMessage> {
  const direct = batchDirectReader(jsm);
  if (direct === null) yield* leaderReads(jsm, names.walStream, options);
  else yield* batchReads({ jsm, direct, stream: names.walStream }, options);
}

async function* leaderReads(
  jsm: JetStreamManager,
  stream: string,
  options: ScanOptions,
): AsyncGenerator<RawWalMessage> {
  for (let seq = options.fromStreamSeq; seq <= options.toStreamSeq;) {
    const m = await nextLeaderRead(jsm, stream, { seq, subject: options.subject });
    if (m === null || m.seq > options.toStreamSeq) return;
    yield storedRawOf(m);
    seq = m.seq + 1;
  }
}

function nextLeaderRead(
  jsm: JetStreamManager,
  stream: string,
  from: { readonly seq: number; readonly subject: string },
): Promise<StoredMsg | null> {
  const query: { seq: number; next_by_subj: string } = { seq: from.seq, next_by_subj: from.subject };
  return jsm.streams.getMessage(stream, query);
}

/**
 * The range in batch direct gets. Where a batch ends before `toStreamSeq` because its server had nothing more on
 * the subject, the leader says whether the range really ends there: a direct get may be served by a replica that
 * has not applied the latest appends yet, which would end the range short.
 */
async function* batchReads(
  reader: { readonly jsm: JetStreamManager; readonly direct: DirectBatchReader; readonly stream: string },
  options: ScanOptions,
): AsyncGenerator<RawWalMessage> {
  const { jsm, direct, stream } = reader;
  const { subject, toStreamSeq } = options;
  let seq = options.fromStreamSeq;
  while (seq <= toStreamSeq) {
    const batch = Math.min(WAL_RANGE_BATCH, toStreamSeq - seq + 1);
    const answer = await direct(stream, { seq, next_by_subj: subject, batch });
    for (const m of answer.messages) {
      if (m.seq > toStreamSeq) return;
      yield storedRawOf(m);
      seq = m.seq + 1;
    }
    if (seq > toStreamSeq || answer.more) continue;
    const next = await nextLeaderRead(jsm, stream, { seq, subject });
    if (next === null || next.seq > toStreamSeq) return;
    yield storedRawOf(next);
    seq = next.seq + 1;
  }
}

function storedRawOf(m: StoredMsg): RawWalMessage {
  return {
    subject: m.subject,
    streamSeq: m.seq,
    data: m.string(),
    epoch: m.header.get(WalHeader.Epoch) || null,
    sequence: m.header.get(WalHeader.Sequence) || null,
  };
}

function rawOf(m: JsMsg): RawWalMessage {
  return {
    subject: m.subject,
    streamSeq: m.seq,
    data: m.string(),
    epoch: m.headers?.get(WalHeader.Epoch) || null,
    sequence: m.headers?.get(WalHeader.Sequence) || null,
  };
}

/** A checked WAL message, or why it is not one the hub wrote. */
export type Checked =
  { readonly ok: true; readonly envelope: Envelope } | { readonly ok: false; readonly reason: string };

/**
 * Checks what can be checked of one message alone: it carries the hub's headers, parses as an envelope, sits on its
 * channel's subject, and its header sequence is its envelope's. (Whether the sequence continues the channel is the
 * caller's check: it knows the channel.)
 */
export function checkWalMessage(names: HubNames, raw: RawWalMessage): Checked {
  if (raw.epoch === null || !/^[1-9][0-9]*$/.test(raw.epoch)) return { ok: false, reason: 'no valid Ag2-Epoch header' };
  if (raw.sequence === null || !/^[1-9][0-9]*$/.test(raw.sequence)) {
    return { ok: false, reason: 'no valid Ag2-Sequence header' };
  }
  let json: unknown;
  try {
    json = JSON.parse(raw.data);
  } catch (err) {
    return { ok: false, reason: `not JSON: ${reasonOf(err)}` };
  }
  const parsed = EnvelopeSchema.safeParse(json);
  if (!parsed.success) return { ok: false, reason: formatIssues('not an envelope', parsed.error.issues) };
  const envelope = parsed.data;
  if (raw.subject !== names.wal(envelope.channel_id)) {
    return { ok: false, reason: `envelope of channel ${envelope.channel_id} on subject ${raw.subject}` };
  }
  if (String(envelope.sequence ?? '') !== raw.sequence) {
    return {
      ok: false,
      reason: `header sequence ${raw.sequence} is not the envelope's ${envelope.sequence ?? 'none'}`,
    };
  }
  return { ok: true, envelope };
}

/**
 * Checks a WAL message the hub is about to deliver: what `checkWalMessage` checks, and against what the channel's
 * runtime knows now, that it is the entry admitted at its sequence. A message that claims a sequence the channel
 * already has, or that sits where the hub already knows the log (at or before its tail, which hydrate and the
 * writer's catch-up move past what they skip) without being the entry at its sequence, is not the hub's. A message
 * past the known tail may be an append whose ack is still in flight, so it passes (with the NATS permissions of a
 * secured deployment nothing but the hub can publish on the WAL). `known.fresh` is the envelope this hub's writer stored
 * at the message's stream sequence (`WalWriter.takeFresh`): the message is then known to be it, and is not parsed.
 */
export function checkForDelivery(
  names: HubNames,
  msg: JsMsg,
  known: {
    readonly channel: (channelId: string) => ChannelRuntime | undefined;
    readonly fresh: Envelope | undefined;
  },
): Checked {
  const { channel, fresh } = known;
  const checked: Checked = fresh === undefined ? checkWalMessage(names, rawOf(msg)) : { ok: true, envelope: fresh };
  if (!checked.ok) return checked;
  const rt = channel(checked.envelope.channel_id);
  const sequence = checked.envelope.sequence ?? 0;
  if (rt === undefined || rt.detached || rt.streamSeqs[sequence - 1] === msg.seq) return checked;
  if (sequence <= rt.streamSeqs.length || msg.seq <= rt.lastStreamSeq) {
    return {
      ok: false,
      reason: `sequence ${sequence} of channel ${checked.envelope.channel_id} is not stream sequence ${msg.seq}`,
    };
  }
  return checked;
}
