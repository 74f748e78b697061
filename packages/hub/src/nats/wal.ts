import { EnvelopeSchema, WalHeader, type Envelope, type HubNames } from '@ag2net/protocol';
import {
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { headers } from '@nats-io/transport-node';

/** Another writer appended to the channel: our view of its tail is stale. */
export class WalConflictError extends Error {
  override readonly name = 'WalConflictError';
  constructor(
    readonly channelId: string,
    readonly tailStreamSeq: number,
  ) {
    super(`another writer appended to channel ${channelId} (tail at stream sequence ${tailStreamSeq})`);
  }
}

/** The WAL message of an envelope, as stored. */
export interface WalEntry {
  readonly envelope: Envelope;
  readonly streamSeq: number;
  /** The writer's lease epoch (header `Ag2-Epoch`), decoded only when read: hydrate never needs it. */
  readonly epoch: () => number;
}

/**
 * Appends envelopes to their channel's literal subject with exactly-once semantics: `Nats-Msg-Id` = envelope id
 * (the server drops a duplicate inside its window) and `expected-last-subject-sequence` (a stale writer is refused).
 * A `10071` whose tail is our own message is the retry of a stored publish (nats-server 2.9 on R3 reports a stored
 * retry that way) and counts as success.
 */
export class WalWriter {
  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly names: HubNames,
  ) {}

  /** Appends `envelope` after stream sequence `expectedLast` (0 for an empty channel); returns its stream sequence. */
  async append(envelope: Envelope, expectedLast: number, epoch: number): Promise<number> {
    const h = headers();
    h.set(WalHeader.Epoch, String(epoch));
    h.set(WalHeader.Sequence, String(envelope.sequence ?? 0));
    try {
      const ack = await this.js.publish(this.names.wal(envelope.channel_id), JSON.stringify(envelope), {
        msgID: envelope.envelope_id,
        expect: { lastSubjectSequence: expectedLast },
        headers: h,
        timeout: 5000,
        retries: 3,
      });
      return ack.seq;
    } catch (err) {
      if (!(err instanceof JetStreamApiError) || err.code !== JetStreamApiCodes.StreamWrongLastSequence) throw err;
      const tail = await this.tail(envelope.channel_id);
      if (tail !== null && tail.envelope.envelope_id === envelope.envelope_id) return tail.streamSeq;
      throw new WalConflictError(envelope.channel_id, tail?.streamSeq ?? 0);
    }
  }

  /** The last envelope of a channel, read from the stream leader (read-after-write consistent), or `null`. */
  async tail(channelId: string): Promise<WalEntry | null> {
    const msg = await this.jsm.streams.getMessage(this.names.walStream, { last_by_subj: this.names.wal(channelId) });
    if (msg === null) return null;
    return {
      envelope: parseStored(msg.string()),
      streamSeq: msg.seq,
      epoch: () => Number(msg.header.get(WalHeader.Epoch) || 0),
    };
  }
}

/** Parses a stored envelope; the WAL holds only what the hub validated, so a failure is corruption. */
export function parseStored(text: string): Envelope {
  return EnvelopeSchema.parse(JSON.parse(text));
}

/** Reads WAL entries with an ordered consumer: one channel from a stream sequence, or the whole log. */
export class WalReader {
  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly names: HubNames,
  ) {}

  /** Every entry of the WAL in stream order (hydrate). */
  async *all(): AsyncGenerator<WalEntry> {
    yield* this.#read(this.names.walAll, 1, Number.POSITIVE_INFINITY);
  }

  /** Up to `max` entries of one channel, from stream sequence `fromStreamSeq`. */
  async *channel(channelId: string, fromStreamSeq: number, max: number): AsyncGenerator<WalEntry> {
    yield* this.#read(this.names.wal(channelId), fromStreamSeq, max);
  }

  async *#read(subject: string, fromStreamSeq: number, max: number): AsyncGenerator<WalEntry> {
    const info = await this.jsm.streams.info(this.names.walStream);
    if (info.state.last_seq < fromStreamSeq || max <= 0) return;
    const consumer = await this.js.consumers.get(this.names.walStream, {
      filter_subjects: subject,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: fromStreamSeq,
    });
    const messages = await consumer.consume({ max_messages: 1000 });
    let count = 0;
    try {
      for await (const m of messages) {
        yield entryOf(m);
        count += 1;
        if (m.info.pending === 0 || count >= max) break;
      }
    } finally {
      messages.stop();
      await consumer.delete().catch(() => undefined);
    }
  }
}

function entryOf(m: JsMsg): WalEntry {
  return {
    envelope: parseStored(m.string()),
    streamSeq: m.seq,
    epoch: () => Number(m.headers?.get(WalHeader.Epoch) || 0),
  };
}
