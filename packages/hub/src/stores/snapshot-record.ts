import type { AdapterState, HubAdapter } from '@ag2net/adapters';
import { EnvelopeSchema, type ChannelMetadata } from '@ag2net/protocol';
import { z } from 'zod';
import { newRuntime, type ChannelRuntime } from './channel-runtime.js';
import { reconcileMetadata } from './reconcile.js';
import type { ChannelFacts, TurnFact } from '../governance/facts.js';
import { isLifecycleEvent } from './lifecycle-events.js';

/**
 * The version of the snapshot record written. Version 1 held every stream sequence in the record itself; version 2
 * keeps full chunks of them under keys of their own (`seq_chunks`), so that a record stays small however long the
 * channel. Both are read; a record of another version is ignored (the channel is folded from the log).
 */
export const SNAPSHOT_VERSION = 2;

/**
 * Stream sequences per chunk: a channel's first `SEQ_CHUNK × seq_chunks` stream sequences are stored in chunks of
 * this many, each written once under `seqs.<channel_id>.<index>` (about 16–32 KB) and never again, and only the rest
 * in the record. A record then costs at most this many sequences, and a channel of any length stays far below a
 * bucket's largest value (1 MB by default).
 */
export const SEQ_CHUNK = 8_192;

const Count = z.number().int().nonnegative();
const Ms = z.number().finite();

const TurnFactSchema = z.strictObject({
  agentId: z.string(),
  triggeringEnvelopeId: z.string().nullable(),
  since: Ms,
  sequence: Count,
});

const FactsRecordSchema = z.strictObject({
  opened_at: Ms.nullable(),
  last_content_at: Ms.nullable(),
  last_text_from: z.array(z.tuple([z.string(), Ms])),
  last_text_to: z.array(z.tuple([z.string(), Ms])),
  turn: TurnFactSchema.nullable(),
  fired: z.array(z.string()),
  auto_close: z.string().nullable(),
});

/**
 * One channel's folded state at a point of its log, as stored in the `<PREFIX>_snapshots` bucket under the channel
 * id: everything hydrate would have built by folding the channel's WAL through stream sequence `stream_seq`
 * (its envelope `sequence`, id `last_envelope_id`), so that hydrate folds only what follows. Metadata is not in it
 * (KV holds it); the handshake and lifecycle envelopes are (`lifecycle`), since folding them corrects metadata that
 * lags the log.
 */
export const ChannelSnapshotRecordSchema = z.strictObject({
  v: z.union([z.literal(1), z.literal(SNAPSHOT_VERSION)]),
  channel_id: z.string().min(1),
  sequence: z.number().int().positive(),
  stream_seq: z.number().int().positive(),
  last_envelope_id: z.string().min(1),
  last_created_at: z.string(),
  /** How many chunks of `SEQ_CHUNK` stream sequences come first, each under a key of its own; absent in version 1. */
  seq_chunks: Count.default(0),
  /** The stream sequence of every envelope after the chunks, delta-encoded (`encodeSeqs`). */
  stream_seqs: z.string(),
  state: z.record(z.string(), z.unknown()).nullable(),
  /** The recent-id window, least recent first: `[envelope_id, sequence, created_at]`. */
  envelope_ids: z.array(z.tuple([z.string(), z.number().int().positive(), z.string()])),
  /** The causation window, least recent first: `[causation key, envelope_id]`. */
  causation: z.array(z.tuple([z.string(), z.string()])),
  lifecycle: z.array(EnvelopeSchema),
  facts: FactsRecordSchema,
  /** Per agent: envelopes of this channel counted in its inbox (`ChannelRuntime.inboxAdmitted`). */
  inbox_admitted: z.array(z.tuple([z.string(), z.number().int().positive()])),
});

export type ChannelSnapshotRecord = z.infer<typeof ChannelSnapshotRecordSchema>;

/** A record with every stream sequence it stands for: its chunks' and its own, checked to add up. */
export interface FullSnapshot {
  readonly record: ChannelSnapshotRecord;
  readonly streamSeqs: readonly number[];
}

/** The record of a runtime's folded state; `null` for a channel with an empty log (nothing to skip). */
export function recordOf(rt: ChannelRuntime): ChannelSnapshotRecord | null {
  const sequence = rt.streamSeqs.length;
  const last = [...rt.envelopeIds.entries()].at(-1);
  if (sequence === 0 || last === undefined) return null;
  const chunks = Math.floor(sequence / SEQ_CHUNK);
  const byKey = (m: Map<string, number>) => [...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const { facts } = rt;
  return {
    v: SNAPSHOT_VERSION,
    channel_id: rt.metadata.channel_id,
    sequence,
    stream_seq: rt.lastStreamSeq,
    last_envelope_id: last[0],
    last_created_at: rt.lastCreatedAt,
    seq_chunks: chunks,
    stream_seqs: encodeSeqs(rt.streamSeqs, chunks * SEQ_CHUNK),
    state: rt.state,
    envelope_ids: [...rt.envelopeIds.entries()].map(([id, ref]) => [id, ref.sequence, ref.createdAt]),
    causation: [...rt.causation.entries()],
    lifecycle: [...rt.lifecycle],
    facts: {
      opened_at: facts.openedAt,
      last_content_at: facts.lastContentAt,
      last_text_from: byKey(facts.lastTextFrom),
      last_text_to: byKey(facts.lastTextTo),
      turn: facts.turn,
      fired: [...facts.fired].sort(),
      auto_close: facts.autoClose,
    },
    inbox_admitted: byKey(rt.inboxAdmitted),
  };
}

/** The text of chunk `index` of a runtime's stream sequences (`SEQ_CHUNK` of them, which must all exist). */
export function seqChunkText(seqs: readonly number[], index: number): string {
  return encodeSeqs(seqs, index * SEQ_CHUNK, (index + 1) * SEQ_CHUNK);
}

/**
 * The record with all its stream sequences, or why it cannot stand for its channel's log head: it names the channel,
 * each of its `seq_chunks` chunks (`chunks`, in order, `null` for one not found) decodes to `SEQ_CHUNK` sequences,
 * and with its own they increase strictly, number `sequence` and end at `stream_seq`; its last id is the last of its
 * window at that sequence. (Whether the log agrees is checked against the WAL by hydrate.)
 */
export function completeRecord(
  record: ChannelSnapshotRecord,
  channelId: string,
  chunks: readonly (string | null)[],
): { readonly ok: true; readonly snapshot: FullSnapshot } | { readonly ok: false; readonly reason: string } {
  const fail = (reason: string) => ({ ok: false as const, reason });
  if (record.channel_id !== channelId)
    return fail(`snapshot of channel ${record.channel_id} under the key ${channelId}`);
  if (record.seq_chunks !== Math.floor(record.sequence / SEQ_CHUNK))
    return fail(`${record.seq_chunks} chunks of stream sequences for sequence ${record.sequence}`);
  const seqs: number[] = [];
  for (const [index, text] of chunks.entries()) {
    if (text === null) return fail(`chunk ${index} of the stream sequences is missing`);
    const part = decodeSeqs(text);
    if (part === null || part.length !== SEQ_CHUNK || (part[0] ?? 0) <= (seqs.at(-1) ?? 0)) {
      return fail(`chunk ${index} of the stream sequences does not decode to ${SEQ_CHUNK} following the ones before`);
    }
    for (const seq of part) seqs.push(seq);
  }
  // After the loop: chunks read only up to the first one missing say which one that is.
  if (chunks.length !== record.seq_chunks)
    return fail(`${chunks.length} chunks of stream sequences for ${record.seq_chunks}`);
  const own = decodeSeqs(record.stream_seqs);
  if (own === null || (own.length > 0 && (own[0] ?? 0) <= (seqs.at(-1) ?? 0)))
    return fail('stream sequences do not decode');
  for (const seq of own) seqs.push(seq);
  if (seqs.length !== record.sequence) return fail(`${seqs.length} stream sequences for sequence ${record.sequence}`);
  if (seqs.at(-1) !== record.stream_seq)
    return fail(`last stream sequence ${seqs.at(-1) ?? 'none'} is not ${record.stream_seq}`);
  const last = record.envelope_ids.at(-1);
  if (last === undefined || last[0] !== record.last_envelope_id || last[1] !== record.sequence) {
    return fail('the id window does not end at the last envelope');
  }
  return { ok: true, snapshot: { record, streamSeqs: seqs } };
}

/**
 * A runtime as folding the channel's log through the record's point would leave it, on top of `metadata` from KV:
 * the record's lifecycle envelopes are reconciled into the metadata again (KV may lag the log), exactly as the
 * fold did. The record must be self-consistent (`inconsistency` is `null`).
 */
export function restoreRuntime(
  metadata: ChannelMetadata,
  adapter: HubAdapter | null,
  snapshot: FullSnapshot,
): ChannelRuntime {
  const { record } = snapshot;
  const state: AdapterState | null = adapter === null ? null : record.state;
  const rt = newRuntime(metadata, adapter, state);
  for (const seq of snapshot.streamSeqs) rt.streamSeqs.push(seq);
  rt.lastStreamSeq = record.stream_seq;
  rt.lastCreatedAt = record.last_created_at;
  for (const [id, sequence, createdAt] of record.envelope_ids) rt.envelopeIds.set(id, { sequence, createdAt });
  for (const [key, id] of record.causation) rt.causation.set(key, id);
  restoreFacts(rt.facts, record.facts);
  for (const [id, n] of record.inbox_admitted) rt.inboxAdmitted.set(id, n);
  for (const envelope of record.lifecycle) {
    if (!isLifecycleEvent(envelope.event_type)) continue;
    rt.lifecycle = rt.lifecycle.concat([envelope]);
    reconcileMetadata(rt, envelope);
  }
  return rt;
}

function restoreFacts(facts: ChannelFacts, record: ChannelSnapshotRecord['facts']): void {
  facts.openedAt = record.opened_at;
  facts.lastContentAt = record.last_content_at;
  for (const [id, at] of record.last_text_from) facts.lastTextFrom.set(id, at);
  for (const [id, at] of record.last_text_to) facts.lastTextTo.set(id, at);
  const turn: TurnFact | null = record.turn;
  facts.turn = turn;
  for (const key of record.fired) facts.fired.add(key);
  facts.autoClose = record.auto_close;
}

/**
 * Stream sequences `from` (inclusive) to `to` (exclusive) as text: the first in base 36, then each difference to the
 * one before (base 36), comma separated. A channel's entries are close together in the WAL, so this is 2–4
 * characters an envelope.
 */
export function encodeSeqs(seqs: readonly number[], from = 0, to = seqs.length): string {
  const parts: string[] = [];
  let previous = 0;
  for (let i = from; i < to; i += 1) {
    const seq = seqs[i] ?? 0;
    parts.push((seq - previous).toString(36));
    previous = seq;
  }
  return parts.join(',');
}

/** The inverse of `encodeSeqs`; `null` when the text is not a strictly increasing list of positive integers. */
export function decodeSeqs(text: string): number[] | null {
  if (text === '') return [];
  const out: number[] = [];
  let previous = 0;
  for (const part of text.split(',')) {
    if (!/^[0-9a-z]{1,11}$/.test(part)) return null;
    const delta = parseInt(part, 36);
    if (delta <= 0) return null;
    previous += delta;
    out.push(previous);
  }
  return out;
}
