import { WalHeader, repr } from '@ag2net/protocol/internal';
import {
  Ag2netError,
  ConflictError,
  EnvelopeSchema,
  ErrorCode,
  UnavailableError,
  type Envelope,
  type HubNames,
} from '@ag2net/protocol';
import {
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { RequestError, TimeoutError, headers } from '@nats-io/transport-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { leaseLapsed } from './fenced-kv.js';
import { OutboxUnreachableError, type Outbox } from './outbox.js';

/** How long an append keeps retrying a timeout or a transient JetStream error, ms: longer than an R3 election. */
export const APPEND_RETRY_BUDGET_MS = 10_000;
/** Timeout of one publish attempt, ms. */
const ATTEMPT_TIMEOUT_MS = 2_000;
/** First and longest pause between two attempts, ms. */
const BACKOFF_FIRST_MS = 50;
const BACKOFF_MAX_MS = 1_000;
/**
 * Fresh appends the writer remembers for the deliverer (`takeFresh`), at most: about a second of admission at full
 * load, more than the deliverer's window. Past it the oldest is forgotten and that message is parsed from the WAL.
 */
export const FRESH_MAX = 8_192;
/**
 * The length of stored JSON (characters, about its bytes) the remembered appends may add up to, by default: large
 * envelopes admitted faster than they are delivered must not pile up in memory (8,192 of 1 MB would be 8 GB); past
 * it the oldest are forgotten.
 */
export const FRESH_MAX_BYTES = 16 * 1024 * 1024;

/** Options of `WalWriter`. */
export interface WalWriterOptions {
  /** The hub's names: the WAL stream and its subjects. */
  readonly names: HubNames;
  /** See `FRESH_MAX_BYTES`. */
  readonly freshMaxBytes?: number;
}

/**
 * The channel's tail is not where this writer expected it (`10071 wrong last sequence`): someone appended after the
 * entry at `expectedLast`. The caller reads the channel after `expectedLast`, folds what it finds and decides again.
 * Code `conflict`; internal to the hub, never answered as such.
 */
export class WalConflictError extends Ag2netError {
  override readonly name = 'WalConflictError';
  constructor(
    readonly channelId: string,
    readonly expectedLast: number,
    options?: ErrorOptions,
  ) {
    super(
      ErrorCode.Conflict,
      `another writer appended to channel ${channelId} after stream sequence ${expectedLast}`,
      options,
    );
  }
}

/** The WAL message of an envelope, as stored. */
export interface WalEntry {
  readonly envelope: Envelope;
  readonly streamSeq: number;
  /** The writer's lease epoch (header `Ag2-Epoch`), decoded only when read: hydrate never needs it. */
  readonly epoch: () => number;
}

/** What an append did. */
export type AppendResult =
  /** Stored now, as sent. */
  | { readonly kind: 'appended'; readonly streamSeq: number }
  /** This very envelope (same channel, sender and id) was already stored, by an earlier attempt or another writer. */
  | { readonly kind: 'stored'; readonly entry: WalEntry };

/** How to append. */
export interface AppendOptions {
  /** Stream sequence of the channel's last message as the writer knows it (0 for an empty channel). */
  readonly expectedLast: number;
  /** The writer's lease epoch, stamped as `Ag2-Epoch`. */
  readonly epoch: number;
  /** Asked before every attempt; `false` ends the append with `UnavailableError` (the writer lost its lease). */
  readonly mayWrite: () => boolean;
  /** How long timeouts and transient errors are retried, ms; default `APPEND_RETRY_BUDGET_MS`. */
  readonly retryBudgetMs?: number;
}

/** The `Nats-Msg-Id` of an envelope: scoped to its channel, so that an id used in one channel never blocks another. */
export function walMsgId(envelope: Envelope): string {
  return `${envelope.channel_id}/${envelope.envelope_id}`;
}

/**
 * Appends envelopes to their channel's literal subject, exactly once, and interprets every outcome exactly:
 * - a fresh ack is the append;
 * - a duplicate ack (`Nats-Msg-Id` = `<channel>/<envelope id>` seen inside the dedupe window) is success only when the
 *   stored message at the acked sequence is this very envelope (same channel, sender and id); otherwise the id is
 *   taken and the append is a `ConflictError`;
 * - `10071 wrong last sequence` (`expected-last-subject-sequence` refused) is a `WalConflictError` for the caller to
 *   resolve by reading the channel (it may be its own earlier attempt: nats-server 2.9 on R3 reports a stored retry
 *   that way, and another writer's append shows up the same way);
 * - a timeout, no responders or a 503 (JetStream without a leader during an election) is retried with the same msg
 *   id and expectation, within `retryBudgetMs`, then answered `UnavailableError`, which clients retry;
 * - before every attempt the writer must still hold its lease (`mayWrite`), else `UnavailableError`.
 */
export class WalWriter {
  /**
   * Envelopes this writer stored fresh (not a duplicate ack) with the length of their stored JSON, by stream sequence,
   * oldest first; see `takeFresh`.
   */
  readonly #fresh = new Map<number, { readonly envelope: Envelope; readonly bytes: number }>();
  #freshBytes = 0;
  readonly #freshMaxBytes: number;
  private readonly names: HubNames;

  constructor(
    private readonly outbox: Outbox,
    private readonly jsm: JetStreamManager,
    options: WalWriterOptions,
  ) {
    this.names = options.names;
    this.#freshMaxBytes = options.freshMaxBytes ?? FRESH_MAX_BYTES;
  }

  async append(envelope: Envelope, options: AppendOptions): Promise<AppendResult> {
    const h = headers();
    h.set(WalHeader.Epoch, String(options.epoch));
    h.set(WalHeader.Sequence, String(envelope.sequence ?? 0));
    const subject = this.names.wal(envelope.channel_id);
    const body = JSON.stringify(envelope);
    const budgetMs = options.retryBudgetMs ?? APPEND_RETRY_BUDGET_MS;
    const giveUpAt = performance.now() + budgetMs;
    for (let failures = 0; ; failures += 1) {
      if (!options.mayWrite()) {
        throw leaseLapsed();
      }
      try {
        const ack = await this.outbox.publishToStream(subject, body, {
          msgId: walMsgId(envelope),
          expectedLastSubjectSeq: options.expectedLast,
          headers: h,
          timeoutMs: ATTEMPT_TIMEOUT_MS,
        });
        if (!ack.duplicate) {
          if (ack.stream === this.names.walStream) this.#remember(ack.seq, { envelope, bytes: body.length });
          return { kind: 'appended', streamSeq: ack.seq };
        }
        return { kind: 'stored', entry: await this.#sameEnvelopeAt(ack.seq, envelope) };
      } catch (err) {
        if (err instanceof ConflictError) throw err;
        if (isWrongLastSequence(err))
          throw new WalConflictError(envelope.channel_id, options.expectedLast, { cause: err });
        if (!isTransient(err)) throw err;
        const pause = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** Math.min(failures, 10));
        if (performance.now() + pause >= giveUpAt) {
          throw new UnavailableError(
            `the WAL did not take the append to channel ${repr(envelope.channel_id)} within ${budgetMs} ms; retry`,
            { cause: err },
          );
        }
        await sleep(pause);
      }
    }
  }

  /**
   * The envelope this writer stored fresh at `streamSeq` (the stream's PubAck said so, not a duplicate), forgotten as
   * it is taken: the message at that sequence is exactly what this writer published, so the deliverer need not
   * parse and check it again. `undefined` when this writer did not store it, forgot it, or it was taken before (a
   * redelivery is parsed from the WAL like any other message).
   */
  takeFresh(streamSeq: number): Envelope | undefined {
    const fresh = this.#fresh.get(streamSeq);
    if (fresh === undefined) return undefined;
    this.#fresh.delete(streamSeq);
    this.#freshBytes -= fresh.bytes;
    return fresh.envelope;
  }

  /** Forgets every remembered append (a new term: the deliverer starts from what the consumer redelivers). */
  forgetFresh(): void {
    this.#fresh.clear();
    this.#freshBytes = 0;
  }

  #remember(streamSeq: number, fresh: { readonly envelope: Envelope; readonly bytes: number }): void {
    this.#fresh.set(streamSeq, fresh);
    this.#freshBytes += fresh.bytes;
    if (this.#freshWithin()) return;
    for (const [oldest, { bytes }] of this.#fresh) {
      this.#fresh.delete(oldest);
      this.#freshBytes -= bytes;
      if (this.#freshWithin()) return;
    }
  }

  #freshWithin(): boolean {
    return this.#fresh.size <= FRESH_MAX && this.#freshBytes <= this.#freshMaxBytes;
  }

  /** The entry at `streamSeq`, which a duplicate ack named, if it is `envelope`; otherwise the id is taken. */
  async #sameEnvelopeAt(streamSeq: number, envelope: Envelope): Promise<WalEntry> {
    const entry = await this.#at(streamSeq);
    const stored = entry?.envelope;
    if (
      entry === null ||
      stored === undefined ||
      stored.channel_id !== envelope.channel_id ||
      stored.sender_id !== envelope.sender_id ||
      stored.envelope_id !== envelope.envelope_id
    ) {
      throw new ConflictError(
        `envelope_id ${repr(envelope.envelope_id)} is already taken in channel ${repr(envelope.channel_id)}`,
      );
    }
    return entry;
  }

  /**
   * The WAL message at a stream sequence, read from the stream leader, or `null` (none, or not an envelope). A read
   * the WAL cannot serve now (a timeout, or a 503 while the stream elects a leader) is `UnavailableError`.
   */
  async at(streamSeq: number): Promise<WalEntry | null> {
    return unavailableWhenTransient(() => this.#at(streamSeq), `message ${streamSeq} of the WAL could not be read now`);
  }

  async #at(streamSeq: number): Promise<WalEntry | null> {
    const msg = await this.jsm.streams.getMessage(this.names.walStream, { seq: streamSeq });
    if (msg === null) return null;
    const envelope = parseStoredOrNull(msg.string());
    if (envelope === null) return null;
    return { envelope, streamSeq: msg.seq, epoch: () => Number(msg.header.get(WalHeader.Epoch) || 0) };
  }

  /**
   * The last envelope of a channel, read from the stream leader (read-after-write consistent), or `null` (none, or
   * the last message is not an envelope). A read the WAL cannot serve now is `UnavailableError`.
   */
  async tail(channelId: string): Promise<WalEntry | null> {
    const msg = await unavailableWhenTransient(
      () => this.jsm.streams.getMessage(this.names.walStream, { last_by_subj: this.names.wal(channelId) }),
      `the tail of channel ${repr(channelId)} could not be read now`,
    );
    if (msg === null) return null;
    const envelope = parseStoredOrNull(msg.string());
    if (envelope === null) return null;
    return { envelope, streamSeq: msg.seq, epoch: () => Number(msg.header.get(WalHeader.Epoch) || 0) };
  }
}

function isWrongLastSequence(err: unknown): boolean {
  return (
    err instanceof JetStreamApiError &&
    (err.code === JetStreamApiCodes.StreamWrongLastSequence ||
      err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

/**
 * Worth retrying with the same msg id: the publish may or may not have been stored, and the stream may be between
 * leaders. nats.js reports no responders on a JetStream subject as `JetStreamNotEnabled` ("jetstream is not
 * enabled"), the hub's outbox as `OutboxUnreachableError`; the server answers 503 while a stream has no leader.
 */
export function isTransient(err: unknown): boolean {
  if (err instanceof TimeoutError || err instanceof OutboxUnreachableError) return true;
  if (err instanceof RequestError) return err.isNoResponders() || err.cause instanceof TimeoutError;
  if (err instanceof JetStreamApiError) return err.status === 503;
  return err instanceof Error && err.name === 'JetStreamNotEnabled';
}

/** Runs a read of the WAL; a transient failure of it becomes `UnavailableError` (`<what>; retry`), which clients retry. */
async function unavailableWhenTransient<T>(read: () => Promise<T>, what: string): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (isTransient(err)) throw new UnavailableError(`${what}; retry`, { cause: err });
    throw err;
  }
}

/** Parses a stored envelope; the WAL holds only what the hub validated, so a failure is corruption. */
export function parseStored(text: string): Envelope {
  return EnvelopeSchema.parse(JSON.parse(text));
}

/** Parses a stored envelope, or `null` when the message is not one. */
function parseStoredOrNull(text: string): Envelope | null {
  try {
    return parseStored(text);
  } catch {
    return null;
  }
}

/** Reads one channel's WAL entries with an ordered consumer, from a stream sequence. */
export class WalReader {
  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly names: HubNames,
  ) {}

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
