import {
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_EXPIRED,
  EV_TEXT,
  EnvelopeSchema,
  type ChannelMetadata,
  type Envelope,
  type EnvelopeInput,
  type HubRequest,
  type HubResponse,
  type Passport,
  type PendingTurn,
} from '@ag2net/protocol';
import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { jetstream } from '@nats-io/jetstream';
import { Channel } from './channel.js';
import { RecentIds } from './dedupe.js';
import type { HubClient } from './hub-client.js';
import { freshEnvelopeId } from './names.js';
import { EnvelopeQueue } from './queue.js';
import type { CallOptions } from './rpc.js';

/** The hub's default `limit` of `readWal`. */
const READ_WAL_PAGE = 1000;

/** Options of a send. */
export interface SendOptions extends CallOptions {
  /** Who may see it (agent ids); default everyone in the channel. */
  readonly audience?: readonly string[] | null;
  /** The envelope this one answers. */
  readonly causationId?: string | null;
  /** Delegation depth; default 0. */
  readonly depth?: number;
}

/** Options of `open`. */
export interface OpenOptions extends CallOptions {
  /** The channel type: `consulting`, `conversation`, `discussion`, `workflow` or a custom one. */
  readonly type: string;
  /** Who to invite, by name or agent id. */
  readonly target: string | readonly string[];
  readonly knobs?: Record<string, unknown>;
  /** Time to live: seconds or `"30m"`; default the creator's rule (2h). */
  readonly ttl?: string | number;
  readonly intent?: string;
  readonly labels?: Record<string, string>;
}

/** Options of `nextEnvelope`. */
export interface NextOptions {
  /** Envelopes that do not match are dropped. */
  readonly predicate?: (envelope: Envelope) => boolean;
  /** Give up after this many ms (`TimeoutError`). */
  readonly timeout?: number;
  readonly signal?: AbortSignal;
}

/** Timed out waiting for an envelope. Local, never on the wire. */
export class EnvelopeTimeoutError extends Error {
  override readonly name = 'EnvelopeTimeoutError';
}

/** The participant was disconnected. */
export class DisconnectedError extends Error {
  override readonly name = 'DisconnectedError';
}

/**
 * What agents and humans share: an identity, a durable inbox consumed at-least-once (duplicates dropped by
 * envelope id, each delivery acked after it was handled, one channel's deliveries handled in order and never
 * concurrently, different channels in parallel), sending, and the hub's per-caller operations.
 */
export abstract class Participant {
  readonly passport: Passport;
  readonly agentId: string;
  readonly hub: HubClient;
  protected readonly queue = new EnvelopeQueue<Envelope>();
  readonly #seen = new RecentIds();
  readonly #channelTails = new Map<string, Promise<void>>();
  #messages: ConsumerMessages | null = null;
  #loop: Promise<void> | null = null;
  #disconnected = false;
  #keepAliveMs = 15_000;

  protected constructor(hub: HubClient, passport: Passport) {
    if (passport.agent_id === null) throw new TypeError('participant has an unstamped passport (not registered)');
    this.hub = hub;
    this.passport = passport;
    this.agentId = passport.agent_id;
  }

  /**
   * Sees every delivery as it arrives, before it waits for its channel's turn: for signals that must not queue
   * behind a running turn (a cancel request for the task that turn runs). Must not throw.
   */
  protected observe(_envelope: Envelope): void {}

  /** Handles one delivery; called in order per channel. */
  protected abstract handle(envelope: Envelope, msg: JsMsg): Promise<'ack' | 'retry'>;

  /** Starts consuming the durable inbox. */
  protected async startConsuming(): Promise<void> {
    const names = this.hub.rpc.names;
    const consumer = await jetstream(this.hub.nc).consumers.get(names.inboxStream, names.inboxConsumer(this.agentId));
    const ackWaitMs = ((await consumer.info()).config.ack_wait ?? 60_000_000_000) / 1_000_000;
    this.#keepAliveMs = Math.max(100, Math.floor(ackWaitMs / 3));
    this.#messages = await consumer.consume({ max_messages: 64 });
    this.#loop = this.#consume(this.#messages);
  }

  async #consume(messages: ConsumerMessages): Promise<void> {
    for await (const m of messages) {
      const parsed = EnvelopeSchema.safeParse(safeJson(m.string()));
      if (!parsed.success) {
        this.hub.logger.warn({ agentId: this.agentId, seq: m.seq }, 'dropping a malformed delivery');
        m.term();
        continue;
      }
      const envelope = parsed.data;
      this.observe(envelope);
      const previous = this.#channelTails.get(envelope.channel_id) ?? Promise.resolve();
      const tail = previous.then(() => this.#deliver(envelope, m));
      this.#channelTails.set(envelope.channel_id, tail);
      void tail.then(() => {
        if (this.#channelTails.get(envelope.channel_id) === tail) this.#channelTails.delete(envelope.channel_id);
      });
    }
  }

  async #deliver(envelope: Envelope, m: JsMsg): Promise<void> {
    if (this.#seen.has(envelope.envelope_id)) {
      m.ack();
      return;
    }
    // Long turns keep the delivery from being redelivered to another replica while they run.
    const keepAlive = setInterval(() => m.working(), this.#keepAliveMs);
    try {
      const outcome = await this.handle(envelope, m);
      if (outcome === 'retry') {
        m.nak(500);
        return;
      }
      this.#seen.add(envelope.envelope_id);
      m.ack();
    } catch (err) {
      this.hub.logger.error(
        { err, agentId: this.agentId, envelopeId: envelope.envelope_id },
        'delivery handler failed',
      );
      this.#seen.add(envelope.envelope_id);
      m.ack();
    } finally {
      clearInterval(keepAlive);
    }
  }

  get disconnected(): boolean {
    return this.#disconnected;
  }

  /** Stops consuming (what was not acked is redelivered to whoever attaches next) and ends pending waits. */
  async disconnect(): Promise<void> {
    if (this.#disconnected) return;
    this.#disconnected = true;
    this.#messages?.stop();
    await this.#loop;
    await Promise.all([...this.#channelTails.values()]);
    this.queue.close();
    this.hub.forget(this);
  }

  /** Unregisters the identity, then disconnects. */
  async unregister(options?: CallOptions): Promise<void> {
    await this.#call('unregister', {}, options);
    await this.disconnect();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.disconnect();
  }

  #call<Op extends Parameters<HubClient['call']>[0]>(
    op: Op,
    request: HubRequest<Op>,
    options?: CallOptions,
  ): Promise<HubResponse<Op>> {
    if (this.#disconnected) return Promise.reject(new DisconnectedError(`${this.passport.name} is disconnected`));
    return this.hub.call(op, request, this.agentId, options);
  }

  /** Opens a channel with `target` (names or ids); resolves once every invitee acked. */
  async open(options: OpenOptions): Promise<Channel> {
    const targets = typeof options.target === 'string' ? [options.target] : [...options.target];
    const ids = await Promise.all(targets.map(async (t) => (await this.hub.getAgent(t, options)).agent_id ?? t));
    const { channel } = await this.#call(
      'createChannel',
      {
        channel_id: freshEnvelopeId(),
        type: options.type,
        participants: ids,
        knobs: options.knobs ?? {},
        ...(options.ttl === undefined ? {} : { ttl: options.ttl }),
        ...(options.intent === undefined ? {} : { intent: options.intent }),
        labels: options.labels ?? {},
      },
      { ...options, timeout: options.timeout ?? 60_000 },
    );
    return new Channel(channel, this);
  }

  /** A handle on an existing channel. */
  async channel(channelId: string, options?: CallOptions): Promise<Channel> {
    return new Channel(await this.hub.getChannel(channelId, options), this);
  }

  /** Posts text into a channel; resolves with the admitted envelope's id. */
  async send(channelId: string, text: string, options: SendOptions = {}): Promise<string> {
    const ack = await this.sendEnvelope(
      {
        channel_id: channelId,
        event_type: EV_TEXT,
        event_data: { text },
        audience: options.audience ? [...options.audience] : null,
        causation_id: options.causationId ?? null,
        depth: options.depth ?? 0,
      },
      options,
    );
    return ack.envelope_id;
  }

  /** Posts an envelope as this participant (`sender_id` is set to this identity). */
  sendEnvelope(
    envelope: Omit<EnvelopeInput, 'sender_id'> & { readonly sender_id?: string },
    options?: CallOptions,
  ): Promise<HubResponse<'post'>> {
    return this.#call('post', { ...envelope, sender_id: this.agentId }, options);
  }

  closeChannel(channelId: string, reason = '', options?: CallOptions): Promise<ChannelMetadata> {
    return this.#call('closeChannel', { channel_id: channelId, reason }, options).then((r) => r.channel);
  }

  /**
   * The envelopes of a channel this participant may see, from `since` through `until`, at most the hub's default
   * page of 1000; pages the hub cut short at its byte budget are followed.
   */
  async readWal(
    channelId: string,
    range: { since?: number; until?: number } = {},
    options?: CallOptions,
  ): Promise<Envelope[]> {
    const out: Envelope[] = [];
    let since = range.since;
    for (;;) {
      const request = { channel_id: channelId, ...range, limit: READ_WAL_PAGE - out.length };
      const page = await this.#call('readWal', since === undefined ? request : { ...request, since }, options);
      out.push(...page.envelopes);
      if (page.next_since === null || out.length >= READ_WAL_PAGE) return out;
      since = page.next_since;
    }
  }

  canSend(channelId: string, eventType?: string, options?: CallOptions): Promise<boolean> {
    return this.#call('canSend', { channel_id: channelId, event_type: eventType ?? null }, options).then(
      (r) => r.allowed,
    );
  }

  pendingTurns(options?: CallOptions): Promise<PendingTurn[]> {
    return this.#call('pendingTurnsFor', {}, options).then((r) => r.turns);
  }

  findEnvelopeByCausation(
    channelId: string,
    senderId: string,
    causationId: string,
    options?: CallOptions,
  ): Promise<Envelope | null> {
    return this.#call(
      'findEnvelopeByCausation',
      { channel_id: channelId, sender_id: senderId, causation_id: causationId },
      options,
    ).then((r) => r.envelope);
  }

  /** The next delivery matching `predicate` (others are dropped); `null` once disconnected. */
  async nextEnvelope(options: NextOptions = {}): Promise<Envelope | null> {
    if (this.#disconnected) throw new DisconnectedError(`${this.passport.name} is disconnected`);
    const signals = [options.signal, options.timeout === undefined ? undefined : AbortSignal.timeout(options.timeout)];
    const active = signals.filter((s): s is AbortSignal => s !== undefined);
    const signal = active.length === 0 ? undefined : AbortSignal.any(active);
    for (;;) {
      let envelope: Envelope | null;
      try {
        envelope = await this.queue.next(signal);
      } catch (err) {
        if (options.signal?.aborted === true) throw err;
        throw new EnvelopeTimeoutError(`no matching envelope within ${options.timeout ?? 0} ms`, { cause: err });
      }
      if (envelope === null) return null;
      if (options.predicate === undefined || options.predicate(envelope)) return envelope;
    }
  }

  /** Every delivery from now on; the iteration ends when the participant disconnects. */
  async *envelopes(): AsyncGenerator<Envelope> {
    for (;;) {
      const envelope = await this.queue.next();
      if (envelope === null) return;
      yield envelope;
    }
  }

  /** Waits for an envelope of `channelId` that matches `predicate` (default: the channel closed or expired). */
  waitForChannelEvent(channelId: string, options: NextOptions = {}): Promise<Envelope | null> {
    const match =
      options.predicate ?? ((e: Envelope) => e.event_type === EV_CHANNEL_CLOSED || e.event_type === EV_CHANNEL_EXPIRED);
    return this.nextEnvelope({ ...options, predicate: (e) => e.channel_id === channelId && match(e) });
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
