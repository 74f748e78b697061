import { Ag2netError, ErrorCode, type Envelope } from '@ag2net/protocol';

/**
 * How many recent deliveries a person's client keeps for one-shot waits (`nextEnvelope`, `waitForChannelEvent`) that
 * start after the delivery arrived; the oldest go first.
 */
export const RECENT_DELIVERIES = 256;

/** Whether `envelope` passes a subscription filter (a predicate that throws counts as no match). */
export function matchesFilter(filter: SubscribeOptions, envelope: Envelope): boolean {
  if (filter.channelId !== undefined && envelope.channel_id !== filter.channelId) return false;
  if (filter.predicate === undefined) return true;
  try {
    return filter.predicate(envelope);
  } catch {
    return false;
  }
}

/** Default bound of a subscription's unread envelopes. */
export const DEFAULT_SUBSCRIPTION_BUFFER = 1_000;

/** Which deliveries a subscription receives. */
export interface SubscribeOptions {
  /** Only this channel's envelopes; default every channel. */
  readonly channelId?: string;
  /** Only envelopes for which this returns true; default all. Must not throw (a throw counts as no match). */
  readonly predicate?: (envelope: Envelope) => boolean;
  /**
   * Most unread envelopes kept; default `DEFAULT_SUBSCRIPTION_BUFFER` (1 000). One more ends the subscription with
   * `SubscriptionOverflowError` instead of dropping anything silently.
   */
  readonly maxBuffered?: number;
}

/** Options of one read of a subscription. */
export interface ReceiveOptions {
  /** Give up after this many ms (`EnvelopeTimeoutError`); default wait for ever. */
  readonly timeout?: number;
  readonly signal?: AbortSignal;
}

/** Timed out waiting for an envelope. Code `timeout`. Local, never on the wire. */
export class EnvelopeTimeoutError extends Ag2netError {
  override readonly name = 'EnvelopeTimeoutError';
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.Timeout, message, options);
  }
}

/**
 * A subscription's reader fell more than its `maxBuffered` envelopes behind; the subscription has ended. Code
 * `closed`. Local.
 */
export class SubscriptionOverflowError extends Ag2netError {
  override readonly name = 'SubscriptionOverflowError';
  constructor(readonly maxBuffered: number) {
    super(ErrorCode.Closed, `subscription fell more than ${maxBuffered} envelopes behind and was ended`);
  }
}

/**
 * A participant's deliveries from the moment it was created, filtered: every subscription receives every matching
 * envelope on its own (subscriptions never compete for one), in delivery order, until it is closed (`close()`,
 * `break` out of `for await`, `await using`) or the participant disconnects. Read it with `for await` or `receive()`.
 */
export interface Subscription extends AsyncIterable<Envelope>, AsyncDisposable {
  /** The next envelope; `null` once the subscription ended. Throws `SubscriptionOverflowError` after an overflow. */
  receive(options?: ReceiveOptions): Promise<Envelope | null>;
  /** Ends the subscription (idempotent); pending reads resolve with `null`. */
  close(): void;
  readonly closed: boolean;
}

interface Waiter {
  resolve(envelope: Envelope | null): void;
  reject(err: Error): void;
}

/** One subscription: a bounded buffer and the reads waiting on it. */
class BufferedSubscription implements Subscription {
  readonly #buffer: Envelope[] = [];
  readonly #waiters: Waiter[] = [];
  readonly #maxBuffered: number;
  #ended = false;
  #failure: SubscriptionOverflowError | null = null;

  constructor(
    private readonly options: SubscribeOptions,
    private readonly detach: (subscription: BufferedSubscription) => void,
  ) {
    this.#maxBuffered = Math.max(1, options.maxBuffered ?? DEFAULT_SUBSCRIPTION_BUFFER);
  }

  /** Offers a delivery; called by the participant for every delivery. */
  offer(envelope: Envelope): void {
    if (this.#ended || !this.#matches(envelope)) return;
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) {
      waiter.resolve(envelope);
      return;
    }
    if (this.#buffer.length >= this.#maxBuffered) {
      this.#failure = new SubscriptionOverflowError(this.#maxBuffered);
      this.close();
      return;
    }
    this.#buffer.push(envelope);
  }

  #matches(envelope: Envelope): boolean {
    return matchesFilter(this.options, envelope);
  }

  get closed(): boolean {
    return this.#ended;
  }

  receive(options: ReceiveOptions = {}): Promise<Envelope | null> {
    const buffered = this.#buffer.shift();
    if (buffered !== undefined) return Promise.resolve(buffered);
    if (this.#failure !== null) return Promise.reject(this.#failure);
    if (this.#ended) return Promise.resolve(null);
    if (options.signal?.aborted === true) return Promise.reject(abortReason(options.signal));
    return new Promise<Envelope | null>((resolve, reject) => {
      const timer =
        options.timeout === undefined
          ? undefined
          : setTimeout(
              () => fail(new EnvelopeTimeoutError(`no matching envelope within ${options.timeout ?? 0} ms`)),
              options.timeout,
            );
      const onAbort = (): void => fail(abortReason(options.signal));
      const cleanup = (): void => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        const i = this.#waiters.indexOf(waiter);
        if (i >= 0) this.#waiters.splice(i, 1);
      };
      const fail = (err: Error): void => {
        cleanup();
        reject(err);
      };
      const waiter: Waiter = {
        resolve: (envelope) => {
          cleanup();
          resolve(envelope);
        },
        reject: fail,
      };
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  close(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.detach(this);
    for (const waiter of this.#waiters.splice(0)) {
      if (this.#failure !== null) waiter.reject(this.#failure);
      else waiter.resolve(null);
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Envelope, void, undefined> {
    try {
      for (;;) {
        const envelope = await this.receive();
        if (envelope === null) return;
        yield envelope;
      }
    } finally {
      // `break` (or a throw in the loop body) lands here: the subscription is released.
      this.close();
    }
  }

  [Symbol.asyncDispose](): Promise<void> {
    this.close();
    return Promise.resolve();
  }
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new Error('aborted', { cause: reason });
}

/**
 * The live subscriptions of one participant. Only what someone subscribed to is kept: a delivery nobody subscribed
 * to is not buffered anywhere.
 */
export class Subscriptions {
  readonly #live = new Set<BufferedSubscription>();
  #ended = false;

  /** A new subscription, live from this call on (ended at once when the participant already disconnected). */
  subscribe(options: SubscribeOptions = {}): Subscription {
    const subscription = new BufferedSubscription(options, (s) => this.#live.delete(s));
    if (this.#ended) subscription.close();
    else this.#live.add(subscription);
    return subscription;
  }

  /** Offers a delivery to every live subscription. */
  publish(envelope: Envelope): void {
    for (const subscription of [...this.#live]) subscription.offer(envelope);
  }

  /** How many subscriptions are live. */
  get size(): number {
    return this.#live.size;
  }

  /** Ends every subscription (reads resolve with `null` once their buffers are read) and refuses new ones. */
  end(): void {
    this.#ended = true;
    for (const subscription of [...this.#live]) subscription.close();
  }
}
