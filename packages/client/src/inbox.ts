import { Ag2netError, EnvelopeSchema, ErrorCode, type Envelope } from '@ag2net/protocol';
import { KeyedSerial, DELIVERY_ORIGIN_HUB, DeliveryHeader } from '@ag2net/protocol/internal';
import { jetstream, type Consumer, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { RecentIds } from './dedupe.js';
import type { ParticipantHub } from './contracts.js';

/** Default time `disconnect()` lets in-flight turns finish before it aborts them, in ms. */
export const DEFAULT_DISCONNECT_GRACE_MS = 10_000;

/** How long `disconnect()` waits, in ms, for turns it aborted to end before the inbox counts as stopped. */
const ABORTED_TURNS_SETTLE_MS = 1_000;

/** What to do with a delivery once it was handled: ack it, or hand it back for redelivery after `delayMs`. */
export type DeliveryOutcome = { readonly settle: 'ack' } | { readonly settle: 'nak'; readonly delayMs: number };

/** What a delivery's handler gets besides the envelope. */
export interface DeliveryContext {
  /** Aborts when the participant stops: `disconnect` ran out of grace, or the connection closed. */
  readonly signal: AbortSignal;
}

/** The participant's side of its inbox. */
export interface InboxHandlers {
  /** Sees every delivery as it arrives, before it waits for its channel's turn. Must not throw. */
  observe(envelope: Envelope): void;
  /** Sees each delivery once, in its channel's order, before `handle`. Must not throw. */
  publish(envelope: Envelope): void;
  /** Handles one delivery; called in order per channel, never twice at once for one channel. */
  handle(envelope: Envelope, context: DeliveryContext): Promise<DeliveryOutcome>;
}

/** Options of `Inbox.start`. */
export interface InboxOptions {
  readonly hub: ParticipantHub;
  /** The identity whose inbox it is: its id, and its name for the log. */
  readonly agentId: string;
  readonly agent: string;
  readonly handlers: InboxHandlers;
}

/**
 * The turns still running were aborted (`disconnect` ran out of grace, or the participant's inbox closed). Code
 * `cancelled`. Local.
 */
export class TurnAbortedError extends Ag2netError {
  override readonly name = 'TurnAbortedError';
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.Cancelled, message, options);
  }
}

/** The inbox stopped delivering while nobody disconnected it (connection closed, consumer deleted). Code `closed`. Local. */
export class InboxClosedError extends Ag2netError {
  override readonly name = 'InboxClosedError';
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.Closed, message, options);
  }
}

/** A delivery unhandled because of an error of the client itself is handed back after this delay, in ms. */
const CLIENT_ERROR_RETRY_MS = 1_000;

/**
 * The consumption of one identity's durable inbox: parses each delivery, runs one channel's deliveries in order and
 * one at a time (channels in parallel), drops duplicates by envelope id, keeps long turns from being redelivered
 * (`working()` every third of the ack wait) and settles each delivery exactly once (ack or nak).
 */
export class Inbox {
  readonly #seen = new RecentIds();
  readonly #published = new RecentIds();
  readonly #channels = new KeyedSerial();
  readonly #stop = new AbortController();
  readonly #loop: Promise<void>;
  /** The pulls of the current connection; replaced after every reconnect (see `#watchConnection`). */
  #messages: ConsumerMessages;
  /** Set while the connection is down: resolves once it is back. */
  #outage: { readonly back: Promise<boolean>; readonly settle: (back: boolean) => void } | null = null;
  readonly #watch: Promise<void>;
  #statuses: AsyncIterable<unknown> | null = null;
  #stopping = false;
  #stopped: Promise<void> | null = null;
  #resolveClosed: (result: void | Error) => void = () => undefined;
  readonly #closed = new Promise<void | Error>((resolve) => (this.#resolveClosed = resolve));

  private readonly consumer: Consumer;
  private readonly keepAliveMs: number;

  private constructor(
    private readonly options: InboxOptions,
    started: { readonly consumer: Consumer; readonly first: ConsumerMessages; readonly keepAliveMs: number },
  ) {
    this.consumer = started.consumer;
    this.keepAliveMs = started.keepAliveMs;
    this.#messages = started.first;
    this.#watch = this.#watchConnection();
    this.#loop = this.#consume();
  }

  /** Starts consuming the identity's inbox. */
  static async start(options: InboxOptions): Promise<Inbox> {
    const names = options.hub.rpc.names;
    const consumer = await jetstream(options.hub.nc).consumers.get(
      names.inboxStream,
      names.inboxConsumer(options.agentId),
    );
    const ackWaitMs = ((await consumer.info()).config.ack_wait ?? 60_000_000_000) / 1_000_000;
    const first = await openMessages(consumer);
    return new Inbox(options, { consumer, first, keepAliveMs: Math.max(100, Math.floor(ackWaitMs / 3)) });
  }

  get #who(): { agent: string; agentId: string } {
    return { agent: this.options.agent, agentId: this.options.agentId };
  }

  get #logger(): ParticipantHub['logger'] {
    return this.options.hub.logger;
  }

  /** Aborts when turns must stop: `stop` ran out of grace, or the inbox closed by itself. */
  get signal(): AbortSignal {
    return this.#stop.signal;
  }

  /** True once `stop` ran or the inbox closed by itself. */
  get stopping(): boolean {
    return this.#stopping;
  }

  /** Resolves when consumption ended: `undefined` after `stop`, the error when it ended by itself. */
  closed(): Promise<void | Error> {
    return this.#closed;
  }

  async #consume(): Promise<void> {
    let failure: unknown = null;
    for (;;) {
      try {
        for await (const m of this.#messages) this.#accept(m);
      } catch (err) {
        failure = err;
      }
      if (this.#stopping) return;
      // The pulls ended because the connection went down: once it is back, pull again on a new subject.
      const outage = this.#outage;
      if (outage === null || failure !== null || !(await outage.back) || this.#stopping) break;
      try {
        this.#messages = await openMessages(this.consumer);
      } catch (err) {
        failure = err;
        break;
      }
    }
    if (this.#stopping) return;
    // Nobody asked the loop to end: the connection closed or the consumer went away. Nothing can be acked now.
    const err = new InboxClosedError(`inbox of ${this.options.agent} stopped delivering`, {
      ...(failure === null ? {} : { cause: failure }),
    });
    this.#logger.error({ err, ...this.#who }, 'inbox consumption ended');
    this.#stopping = true;
    this.#stop.abort(new TurnAbortedError('the inbox closed', { cause: err }));
    this.#resolveClosed(err);
  }

  /**
   * Ends the pulls when the connection goes down, and lets `#consume` pull again on a new subject once it is back.
   * The server keeps a pull request that was waiting when the connection went down, and sends it the next delivery
   * once a subscription matches its subject again; through the identity account's import that answer goes to a reply
   * the server already forgot, so the delivery would wait out its ack wait. A pull on a new subject leaves the old
   * requests with no interest, and the server drops them.
   */
  async #watchConnection(): Promise<void> {
    const nc = this.options.hub.nc;
    void nc.closed().then(() => this.#outage?.settle(false));
    const statuses = nc.status();
    this.#statuses = statuses;
    for await (const status of statuses) {
      if (this.#stopping) return;
      if (status.type === 'disconnect' && this.#outage === null) {
        let settle: (back: boolean) => void = () => undefined;
        const back = new Promise<boolean>((resolve) => (settle = resolve));
        this.#outage = { back, settle };
        this.#messages.stop();
      } else if (status.type === 'reconnect' && this.#outage !== null) {
        const outage = this.#outage;
        this.#outage = null;
        outage.settle(true);
      }
    }
  }

  #accept(m: JsMsg): void {
    // Only the hub publishes deliveries (no identity may publish on an inbox subject); anything else is removed
    // unread, never handed to the participant.
    if (m.headers?.get(DeliveryHeader.Origin) !== DELIVERY_ORIGIN_HUB) {
      this.#logger.warn({ ...this.#who, seq: m.seq, subject: m.subject }, 'dropping a delivery the hub did not send');
      settleQuietly(() => m.term());
      return;
    }
    const parsed = EnvelopeSchema.safeParse(safeJson(m.string()));
    if (!parsed.success) {
      this.#logger.warn({ ...this.#who, seq: m.seq }, 'dropping a malformed delivery');
      settleQuietly(() => m.term());
      return;
    }
    const envelope = parsed.data;
    this.options.handlers.observe(envelope);
    // Fire and forget: `#deliver` settles the message itself and never rejects; `stop` waits through `idle()`.
    void this.#channels.run(envelope.channel_id, () => this.#deliver(envelope, m));
  }

  async #deliver(envelope: Envelope, m: JsMsg): Promise<void> {
    // A delivery that had not started when the inbox stopped goes back at once, to a replica or the next attach.
    if (this.#stopping) return settleQuietly(() => m.nak());
    if (this.#seen.has(envelope.envelope_id)) return settleQuietly(() => m.ack());
    if (this.#published.add(envelope.envelope_id)) this.options.handlers.publish(envelope);
    // Long turns keep the delivery from being redelivered to another replica while they run.
    const keepAlive = setInterval(() => settleQuietly(() => m.working()), this.keepAliveMs);
    try {
      const outcome = await untilAborted(
        this.options.handlers.handle(envelope, { signal: this.#stop.signal }),
        this.#stop.signal,
      );
      if (outcome === null) {
        // The turn was aborted; whatever it does later is not acked.
        settleQuietly(() => m.nak());
      } else if (outcome.settle === 'ack') {
        this.#seen.add(envelope.envelope_id);
        settleQuietly(() => m.ack());
      } else {
        settleQuietly(() => m.nak(outcome.delayMs));
      }
    } catch (err) {
      this.#logger.error({ err, ...this.#who, envelopeId: envelope.envelope_id }, 'delivery failed');
      settleQuietly(() => m.nak(CLIENT_ERROR_RETRY_MS));
    } finally {
      clearInterval(keepAlive);
    }
  }

  /**
   * Stops consuming; lets the turns in flight finish for at most `graceMs`, then aborts them (their deliveries go
   * back for redelivery) and resolves without waiting for handlers that ignore their signal. Idempotent.
   */
  stop(graceMs: number): Promise<void> {
    this.#stopped ??= this.#stopNow(graceMs);
    return this.#stopped;
  }

  async #stopNow(graceMs: number): Promise<void> {
    const byItself = this.#stopping;
    this.#stopping = true;
    this.#messages.stop();
    this.#outage?.settle(false);
    // nats.js's status iterator ends with `stop()` (not in its declared type); a shared connection outlives this inbox.
    const statuses = this.#statuses;
    if (statuses !== null && isStoppable(statuses)) statuses.stop();
    await this.#loop;
    await this.#watch;
    const inflight = this.#channels.idle().then(() => true);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const graceOver = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), graceMs)));
    const finished = await Promise.race([inflight, graceOver]);
    clearTimeout(timer);
    if (!finished) {
      this.#stop.abort(new TurnAbortedError(`turn still running ${graceMs} ms after disconnect`));
      // Aborted turns clean up (release their turn lock, hand their delivery back) while the identity's connection
      // is still open; a handler that ignores its signal is not waited for past ABORTED_TURNS_SETTLE_MS.
      const settleOver = new Promise<void>((resolve) => (timer = setTimeout(resolve, ABORTED_TURNS_SETTLE_MS)));
      await Promise.race([inflight, settleOver]);
      clearTimeout(timer);
    }
    if (!byItself) this.#resolveClosed(undefined);
  }
}

/** Whether an iterator has nats.js's `stop()`. */
function isStoppable(value: object): value is { stop(): void } {
  return 'stop' in value && typeof value.stop === 'function';
}

/** The pulls of an inbox consumer; a deleted consumer (the identity was unregistered) ends them. */
function openMessages(consumer: Consumer): Promise<ConsumerMessages> {
  return consumer.consume({ max_messages: 64, abort_on_missing_resource: true });
}

/** `work`'s result, or `null` as soon as `signal` aborts (the work's own outcome is then ignored). */
async function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | null> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return null;
  }
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<null>((resolve) => {
    onAbort = () => resolve(null);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
    // A late rejection of abandoned work must not surface as an unhandled rejection.
    work.catch(() => undefined);
  }
}

/** Acks and naks publish on the connection; once it closed there is nobody to tell, and the server redelivers. */
function settleQuietly(settle: () => void): void {
  try {
    settle();
  } catch {
    // The connection is closed: the delivery stays unacked and is redelivered after the ack wait.
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
