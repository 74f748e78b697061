import type { Envelope } from '@ag2net/protocol';

/** Default most envelopes an inbox buffer keeps unread; older ones are dropped (and counted) past it. */
export const DEFAULT_INBOX_CAPACITY = 500;

/** What one read of the inbox returns. */
export interface InboxRead {
  /** The oldest unread envelopes, at most the read's limit, in arrival order. */
  readonly envelopes: readonly Envelope[];
  /** Unread envelopes left after this read. */
  readonly remaining: number;
  /** Envelopes dropped unread since the last read because the buffer was full. */
  readonly dropped: number;
}

/** Options of `InboxBuffer.take`. */
export interface TakeOptions {
  /** At most this many envelopes. */
  readonly limit: number;
  /** Only envelopes of this channel; others stay unread. Default every channel. */
  readonly channelId?: string;
}

/**
 * What arrived for an identity since it last read: a bounded FIFO that keeps the newest `capacity` envelopes
 * (the oldest go first when it is full, counted in `dropped`). A read takes what it returns.
 */
export class InboxBuffer {
  readonly #capacity: number;
  readonly #unread: Envelope[] = [];
  /** Ids of the unread envelopes and of the last `capacity` read ones: a redelivery of either is not kept again. */
  readonly #seen = new Set<string>();
  readonly #read: string[] = [];
  #dropped = 0;

  constructor(capacity = DEFAULT_INBOX_CAPACITY) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('inbox capacity must be a whole number ≥ 1');
    this.#capacity = capacity;
  }

  /** Unread envelopes. */
  get size(): number {
    return this.#unread.length;
  }

  /** Adds a delivery; a redelivered envelope (same id, unread or read lately) is not added again. */
  push(envelope: Envelope): void {
    if (envelope.envelope_id !== '' && this.#seen.has(envelope.envelope_id)) return;
    this.#unread.push(envelope);
    this.#seen.add(envelope.envelope_id);
    while (this.#unread.length > this.#capacity) {
      const oldest = this.#unread.shift();
      if (oldest !== undefined) this.#seen.delete(oldest.envelope_id);
      this.#dropped += 1;
    }
  }

  /** Takes the oldest unread envelopes (of one channel when told); resets the dropped count. */
  take(options: TakeOptions): InboxRead {
    const taken: Envelope[] = [];
    const kept: Envelope[] = [];
    for (const envelope of this.#unread) {
      const matches = options.channelId === undefined || envelope.channel_id === options.channelId;
      if (matches && taken.length < options.limit) taken.push(envelope);
      else kept.push(envelope);
    }
    this.#unread.splice(0, this.#unread.length, ...kept);
    for (const envelope of taken) {
      this.#read.push(envelope.envelope_id);
      if (this.#read.length > this.#capacity) this.#seen.delete(this.#read.shift() ?? '');
    }
    const dropped = this.#dropped;
    this.#dropped = 0;
    return { envelopes: taken, remaining: kept.length, dropped };
  }
}
