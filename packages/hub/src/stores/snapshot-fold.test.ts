import {
  ConsultingAdapter,
  ConversationAdapter,
  DiscussionAdapter,
  WorkflowAdapter,
  roundRobin,
  type ChannelAdapter,
} from '@ag2net/adapters';
import { buildParticipants } from '@ag2net/adapters/internal';
import {
  ChannelMetadataSchema,
  ChannelState,
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_INVITE,
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_OPENED,
  EV_CONTEXT_SET,
  EV_EXPECTATION_VIOLATED,
  EV_PACKET,
  EV_TEXT,
  createEnvelope,
  type ChannelMetadata,
  type Envelope,
} from '@ag2net/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyAppended, newRuntime, type ChannelRuntime } from './channel-runtime.js';
import { reconcileMetadata } from './reconcile.js';
import { factsSnapshot } from '../governance/facts.js';
import { InboxCounters } from '../governance/inbox-counters.js';
import {
  ChannelSnapshotRecordSchema,
  decodeSeqs,
  encodeSeqs,
  completeRecord,
  seqChunkText,
  SEQ_CHUNK,
  type ChannelSnapshotRecord,
  recordOf,
  restoreRuntime,
} from './snapshot-record.js';

const PEOPLE = ['alice', 'bob', 'carol'];
const T0 = Date.parse('2026-01-01T00:00:00.000Z');

function metadataFor(adapter: ChannelAdapter, others: readonly string[], knobs: Record<string, unknown> = {}) {
  return ChannelMetadataSchema.parse({
    channel_id: 'c1',
    manifest: adapter.manifest,
    creator_id: 'alice',
    participants: buildParticipants('alice', others, new Date(T0).toISOString()),
    // Pending with invites out, as the hub stores a new channel: the log's acks and `opened` move it on.
    state: ChannelState.Pending,
    pending_acks: [...others],
    created_at: new Date(T0).toISOString(),
    knobs,
  });
}

const CASES: readonly { name: string; adapter: ChannelAdapter; metadata: ChannelMetadata }[] = [
  { name: 'consulting', adapter: new ConsultingAdapter(), metadata: metadataFor(new ConsultingAdapter(), ['bob']) },
  {
    name: 'conversation',
    adapter: new ConversationAdapter(),
    metadata: metadataFor(new ConversationAdapter(), ['bob']),
  },
  {
    name: 'discussion',
    adapter: new DiscussionAdapter(),
    metadata: metadataFor(new DiscussionAdapter(), ['bob', 'carol']),
  },
  {
    name: 'workflow',
    adapter: new WorkflowAdapter(),
    metadata: metadataFor(new WorkflowAdapter(), ['bob', 'carol'], {
      graph: roundRobin(PEOPLE).toDict(),
      context_vars: { n: 1 },
    }),
  },
];

/** One entry of a random log: who sends what, to whom, in answer to which earlier entry, how far into the WAL. */
const stepArb = fc.record({
  sender: fc.constantFrom(...PEOPLE, 'mallory'),
  type: fc.constantFrom(
    EV_TEXT,
    EV_TEXT,
    EV_TEXT,
    EV_PACKET,
    EV_CONTEXT_SET,
    EV_CHANNEL_INVITE,
    EV_CHANNEL_INVITE_ACK,
    EV_CHANNEL_OPENED,
    EV_EXPECTATION_VIOLATED,
    EV_CHANNEL_CLOSED,
  ),
  text: fc.string({ maxLength: 8 }),
  audience: fc.option(fc.subarray(PEOPLE, { minLength: 1 }), { nil: undefined }),
  answers: fc.option(fc.nat(), { nil: undefined }),
  gap: fc.integer({ min: 1, max: 5 }),
  ms: fc.integer({ min: 0, max: 5_000 }),
});
type Step = typeof stepArb extends fc.Arbitrary<infer S> ? S : never;

/** The envelopes a log of `steps` holds (stream sequences with gaps: other channels share the WAL); ends at a close. */
function logOf(steps: readonly Step[]): { envelope: Envelope; streamSeq: number }[] {
  const out: { envelope: Envelope; streamSeq: number }[] = [];
  let streamSeq = 0;
  let at = T0;
  for (const [i, step] of steps.entries()) {
    streamSeq += step.gap;
    at += step.ms;
    const earlier = step.answers === undefined || out.length === 0 ? undefined : out[step.answers % out.length];
    const data =
      step.type === EV_PACKET
        ? { body: step.text, routing: { kind: 'text' } }
        : step.type === EV_CONTEXT_SET
          ? { set: { [step.text]: i }, delete: [] }
          : step.type === EV_CHANNEL_CLOSED
            ? { reason: 'explicit_close', channel_id: 'c1' }
            : { text: step.text };
    const envelope = createEnvelope({
      channel_id: 'c1',
      sender_id: step.sender,
      event_type: step.type,
      event_data: data,
      envelope_id: `e${String(i).padStart(4, '0')}`,
      created_at: new Date(at).toISOString(),
      sequence: i + 1,
      ...(step.audience === undefined ? {} : { audience: step.audience }),
      ...(earlier === undefined ? {} : { causation_id: earlier.envelope.envelope_id }),
    });
    out.push({ envelope, streamSeq });
    if (step.type === EV_CHANNEL_CLOSED) break;
  }
  return out;
}

/** What hydrate does with each envelope of an open channel's log (`recordAppended` + `reconcileMetadata`). */
function fold(
  rt: ChannelRuntime,
  inboxes: InboxCounters,
  entries: readonly { envelope: Envelope; streamSeq: number }[],
) {
  for (const { envelope, streamSeq } of entries) {
    applyAppended(rt, envelope, streamSeq);
    inboxes.count(envelope, rt, (id) => (PEOPLE.includes(id) ? { maxPending: 100, highWater: null } : null));
    if (envelope.event_type === EV_CHANNEL_CLOSED) {
      inboxes.release(rt.inboxAdmitted);
      rt.inboxAdmitted.clear();
    }
    reconcileMetadata(rt, envelope);
  }
}

/** Everything a runtime holds, as comparable data. */
function view(rt: ChannelRuntime, inboxes: InboxCounters) {
  return {
    metadata: rt.metadata,
    state: rt.state,
    last_stream_seq: rt.lastStreamSeq,
    stream_seqs: [...rt.streamSeqs],
    envelope_ids: [...rt.envelopeIds.entries()],
    causation: [...rt.causation.entries()],
    closing_at: rt.closingAt,
    last_created_at: rt.lastCreatedAt,
    facts: factsSnapshot(rt.facts),
    lifecycle: rt.lifecycle,
    inbox_admitted: [...rt.inboxAdmitted.entries()].sort(),
    inboxes: inboxes.snapshot(),
  };
}

describe.each(CASES)('a $name channel restored from a snapshot', (c) => {
  it('folds to the same state as folding its whole log: snapshot + tail fold == full fold', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 60 }), fc.nat(), (steps, cut) => {
        const log = logOf(steps);
        const split = 1 + (cut % log.length);

        const whole = newRuntime(c.metadata, c.adapter, c.adapter.initialState(c.metadata));
        const wholeInboxes = new InboxCounters();
        fold(whole, wholeInboxes, log);

        // The head is folded by one hub, its snapshot stored as JSON; another hub restores it and folds the tail.
        const head = newRuntime(c.metadata, c.adapter, c.adapter.initialState(c.metadata));
        fold(head, new InboxCounters(), log.slice(0, split));
        const stored: unknown = JSON.parse(JSON.stringify(recordOf(head)));
        const record = ChannelSnapshotRecordSchema.parse(stored);
        const complete = completeRecord(record, 'c1', []);
        if (!complete.ok) throw new Error(complete.reason);
        const inboxes = new InboxCounters();
        const restored = restoreRuntime(c.metadata, c.adapter, complete.snapshot);
        inboxes.add(restored.inboxAdmitted);
        fold(restored, inboxes, log.slice(split));

        expect(view(restored, inboxes)).toEqual(view(whole, wholeInboxes));
      }),
      { numRuns: 200 },
    );
  });
});

describe('snapshot records', () => {
  it('encode stream sequences compactly and decode them exactly; anything else does not decode', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 1_000_000 }), { maxLength: 200 }), (gaps) => {
        const seqs = gaps.reduce<number[]>((acc, g) => [...acc, (acc.at(-1) ?? 0) + g], []);
        expect(decodeSeqs(encodeSeqs(seqs))).toEqual(seqs);
      }),
    );
    expect(encodeSeqs([3, 4, 40, 1_000])).toBe('3,1,10,qo');
    expect(decodeSeqs('3,0')).toBeNull();
    expect(decodeSeqs('3,-1')).toBeNull();
    expect(decodeSeqs('3,,4')).toBeNull();
  });

  it('that do not add up are refused before anything is checked against the log', () => {
    const rt = newRuntime(metadataFor(new ConversationAdapter(), ['bob']), null, null);
    const opened = createEnvelope({
      channel_id: 'c1',
      sender_id: 'alice',
      event_type: EV_CHANNEL_OPENED,
      event_data: {},
      envelope_id: 'e1',
      created_at: new Date(T0).toISOString(),
      sequence: 1,
    });
    applyAppended(rt, opened, 7);
    const record = recordOf(rt);
    if (record === null) throw new Error('a channel with an envelope has a record');
    expect(reasonOf(record, 'c1')).toBeNull();
    expect(reasonOf(record, 'c2')).toBe('snapshot of channel c1 under the key c2');
    expect(reasonOf({ ...record, stream_seqs: '7,1' }, 'c1')).toBe('2 stream sequences for sequence 1');
    expect(reasonOf({ ...record, stream_seq: 8 }, 'c1')).toBe('last stream sequence 7 is not 8');
    expect(reasonOf({ ...record, last_envelope_id: 'e0' }, 'c1')).toBe(
      'the id window does not end at the last envelope',
    );
    // A record written before chunks (version 1) is read as one without any.
    const { seq_chunks: _chunks, ...v1 } = { ...record, v: 1 };
    expect(ChannelSnapshotRecordSchema.parse(v1)).toEqual({ ...record, v: 1, seq_chunks: 0 });
  });

  it('of a long channel keep its first stream sequences in chunks, each checked to follow the one before', () => {
    const rt = newRuntime(metadataFor(new ConversationAdapter(), ['bob']), null, null);
    const count = 2 * SEQ_CHUNK + 3;
    for (let n = 1; n <= count; n += 1) {
      const envelope = createEnvelope({
        channel_id: 'c1',
        sender_id: 'alice',
        event_type: EV_TEXT,
        event_data: { text: 'hi' },
        envelope_id: `e${n}`,
        created_at: new Date(T0 + n).toISOString(),
        sequence: n,
      });
      applyAppended(rt, envelope, 3 * n + (n % 2));
    }
    const record = recordOf(rt);
    if (record === null) throw new Error('a channel with envelopes has a record');
    expect(record.seq_chunks).toBe(2);
    expect(decodeSeqs(record.stream_seqs)).toEqual(rt.streamSeqs.slice(2 * SEQ_CHUNK));
    const chunks = [seqChunkText(rt.streamSeqs, 0), seqChunkText(rt.streamSeqs, 1)];
    expect(chunks.map((text) => decodeSeqs(text)?.length)).toEqual([SEQ_CHUNK, SEQ_CHUNK]);

    const complete = completeRecord(record, 'c1', chunks);
    if (!complete.ok) throw new Error(complete.reason);
    expect(complete.snapshot.streamSeqs).toEqual(rt.streamSeqs);
    const restored = restoreRuntime(rt.metadata, null, complete.snapshot);
    expect(restored.streamSeqs).toEqual(rt.streamSeqs);
    expect(restored.lastStreamSeq).toBe(rt.lastStreamSeq);

    expect(reasonOf(record, 'c1', [chunks[0] ?? '', null])).toBe('chunk 1 of the stream sequences is missing');
    expect(reasonOf(record, 'c1', [chunks[0] ?? ''])).toBe('1 chunks of stream sequences for 2');
    expect(reasonOf({ ...record, seq_chunks: 1_000_000_000 }, 'c1', chunks)).toBe(
      `1000000000 chunks of stream sequences for sequence ${count}`,
    );
    expect(reasonOf(record, 'c1', [chunks[1] ?? '', chunks[0] ?? ''])).toBe(
      `chunk 1 of the stream sequences does not decode to ${SEQ_CHUNK} following the ones before`,
    );
    expect(reasonOf(record, 'c1', [chunks[0] ?? '', '1,1'])).toBe(
      `chunk 1 of the stream sequences does not decode to ${SEQ_CHUNK} following the ones before`,
    );
    expect(reasonOf({ ...record, stream_seqs: '1' }, 'c1', chunks)).toBe('stream sequences do not decode');

    // However long the channel: 400,000 stream sequences spread into one `push` overflowed the stack, so a channel
    // past about 130,000 envelopes could not be restored at all.
    const long = Array.from({ length: 400_000 }, (_, i) => 2 * i + 1);
    expect(restoreRuntime(rt.metadata, null, { record, streamSeqs: long }).streamSeqs).toEqual(long);
  });
});

/** Why `record` with these chunks cannot stand for channel `channelId`, or `null` when it can. */
function reasonOf(record: ChannelSnapshotRecord, channelId: string, chunks: readonly (string | null)[] = []) {
  const complete = completeRecord(record, channelId, chunks);
  return complete.ok ? null : complete.reason;
}
