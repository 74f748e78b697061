import {
  Ag2netError,
  ErrorCode,
  textData,
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_EXPIRED,
  EV_TEXT,
  isProtocolEvent,
  type ChannelMetadata,
  type Envelope,
  type EnvelopeInput,
  type HubOp,
  type HubRequest,
  type HubResponse,
  type Passport,
  type PendingTurn,
  type PostAck,
  type Rendered,
} from '@ag2net/protocol';
import { Channel } from './channel.js';
import type { ChannelOwner, DisconnectOptions, ParticipantHub, SendOptions } from './contracts.js';
import { DEFAULT_DISCONNECT_GRACE_MS, Inbox, type DeliveryContext, type DeliveryOutcome } from './inbox.js';
import { freshEnvelopeId } from './names.js';
import type { NextOptions, OpenOptions } from './participant-options.js';
import type { CallOptions } from './rpc.js';
import { mergePendingTurns, partitionRange } from './scatter.js';
import { tracedSend } from './tracing.js';
import {
  RECENT_DELIVERIES,
  Subscriptions,
  matchesFilter,
  type ReceiveOptions,
  type SubscribeOptions,
  type Subscription,
} from './subscriptions.js';

/** The hub's default `limit` of `readWal`. */
const READ_WAL_PAGE = 1000;

const NEVER_ABORTED = new AbortController().signal;

/** The participant was disconnected. Code `closed`. Local. */
export class DisconnectedError extends Ag2netError {
  override readonly name = 'DisconnectedError';
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.Closed, message, options);
  }
}

/**
 * What agents and humans share: an identity, a durable inbox consumed at-least-once (duplicates dropped by
 * envelope id, each delivery settled after it was handled, one channel's deliveries handled in order and never
 * concurrently, different channels in parallel), subscriptions to its deliveries, sending, and the hub's
 * per-caller operations.
 */
export abstract class Participant implements ChannelOwner {
  readonly passport: Passport;
  readonly agentId: string;
  readonly hub: ParticipantHub;
  readonly #subscriptions = new Subscriptions();
  /** Deliveries no one-shot wait has taken yet, oldest first, at most `RECENT_DELIVERIES` (people only). */
  readonly #recent: Envelope[] = [];
  #inbox: Inbox | null = null;
  #inboxEnded: Error | null = null;
  #unregistering = false;
  #disconnected = false;
  #resolveClosed: (result: void | Error) => void = () => undefined;
  readonly #closed = new Promise<void | Error>((resolve) => (this.#resolveClosed = resolve));

  protected constructor(hub: ParticipantHub, passport: Passport) {
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

  /** Handles one delivery; called in order per channel. `context.signal` aborts when the participant stops. */
  protected abstract handle(envelope: Envelope, context: DeliveryContext): Promise<DeliveryOutcome>;

  /** Starts consuming the durable inbox. */
  protected async startConsuming(): Promise<void> {
    const inbox = await Inbox.start({
      hub: this.hub,
      agentId: this.agentId,
      agent: this.passport.name,
      handlers: {
        observe: (envelope) => this.observe(envelope),
        publish: (envelope) => this.#publish(envelope),
        handle: (envelope, context) => this.handle(envelope, context),
      },
    });
    this.#inbox = inbox;
    void inbox.closed().then((result) => {
      if (!(result instanceof Error)) return;
      this.#inboxEnded = result;
      // The inbox ended by itself (connection closed, consumer deleted): the participant is done. While it
      // unregisters, the hub deleting the consumer is expected, and `unregister` finishes once the hub answered (the
      // identity's connection must stay open for that answer).
      if (!this.#unregistering) this.#finish(result);
    });
  }

  /**
   * Whether one-shot waits (`nextEnvelope`, `waitForChannelEvent`) also see the last `RECENT_DELIVERIES` deliveries
   * that arrived before the wait started and that no earlier wait took, so that "send, then wait for the answer"
   * cannot miss an answer that came first. People keep them; agents, whose handler consumes every delivery, do not.
   */
  protected keepsRecentDeliveries(): boolean {
    return false;
  }

  #publish(envelope: Envelope): void {
    if (this.keepsRecentDeliveries()) {
      this.#recent.push(envelope);
      if (this.#recent.length > RECENT_DELIVERIES) this.#recent.shift();
    }
    this.#subscriptions.publish(envelope);
  }

  /** Takes the oldest recent delivery that `filter` matches out of the recent ones, or `undefined`. */
  #takeRecent(filter: SubscribeOptions): Envelope | undefined {
    const i = this.#recent.findIndex((e) => matchesFilter(filter, e));
    if (i < 0) return undefined;
    return this.#recent.splice(i, 1)[0];
  }

  #forgetRecent(envelope: Envelope): void {
    const i = this.#recent.indexOf(envelope);
    if (i >= 0) this.#recent.splice(i, 1);
  }

  /** Aborts when the participant's turns must stop (disconnect ran out of grace, the inbox closed). */
  protected get turnSignal(): AbortSignal {
    return this.#inbox?.signal ?? NEVER_ABORTED;
  }

  get disconnected(): boolean {
    return this.#disconnected;
  }

  /**
   * Resolves once the participant stopped: `undefined` after `disconnect()`, the error when its inbox stopped
   * delivering by itself (the NATS connection closed, the consumer was deleted). Never rejects.
   */
  closed(): Promise<void | Error> {
    return this.#closed;
  }

  /**
   * Stops consuming. Deliveries not started yet go back at once; turns in flight may finish for `graceMs`, then
   * their signals abort and their deliveries go back too (redelivered to a replica or the next attach).
   * Subscriptions end. Idempotent.
   */
  async disconnect(options: DisconnectOptions = {}): Promise<void> {
    if (this.#disconnected) {
      await this.#closed;
      return;
    }
    this.#disconnected = true;
    await this.#inbox?.stop(options.graceMs ?? DEFAULT_DISCONNECT_GRACE_MS);
    this.#finish(undefined);
    await this.#closed;
  }

  #finish(result: void | Error): void {
    this.#disconnected = true;
    this.#subscriptions.end();
    // The hub client bound to this identity closes with it (its own connection, its credential renewal).
    void this.hub.forget(this).finally(() => this.#resolveClosed(result));
  }

  /** Unregisters the identity, then disconnects. */
  async unregister(options?: CallOptions): Promise<void> {
    this.#unregistering = true;
    try {
      await this.#call('unregister', {}, options);
    } catch (err) {
      this.#unregistering = false;
      if (this.#inboxEnded !== null) this.#finish(this.#inboxEnded);
      throw err;
    }
    await this.disconnect();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.disconnect();
  }

  #call<Op extends HubOp>(
    op: Op,
    request: HubRequest<Op>,
    options?: CallOptions & { readonly partition?: number },
  ): Promise<HubResponse<Op>> {
    if (this.#disconnected) return Promise.reject(new DisconnectedError(`${this.passport.name} is disconnected`));
    return this.hub.call(op, request, { ...options, caller: this.agentId });
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
    return new Channel(await this.getChannel(channelId, options), this);
  }

  /** A channel's metadata, as this participant (the hub answers only participants of the channel). */
  getChannel(channelId: string, options?: CallOptions): Promise<ChannelMetadata> {
    if (this.#disconnected) return Promise.reject(new DisconnectedError(`${this.passport.name} is disconnected`));
    return this.hub.getChannel(channelId, { ...options, caller: this.agentId });
  }

  /** Up to `filter.limit` (default 50) of the channels this participant takes part in. */
  listChannels(filter: HubRequest<'listChannels'> = {}, options?: CallOptions): Promise<ChannelMetadata[]> {
    if (this.#disconnected) return Promise.reject(new DisconnectedError(`${this.passport.name} is disconnected`));
    return this.hub.listChannels(filter, { ...options, caller: this.agentId });
  }

  /** A channel's adapter state as this participant may see it; `null` when the channel has none. */
  adapterState(channelId: string, options?: CallOptions): Promise<Record<string, unknown> | null> {
    if (this.#disconnected) return Promise.reject(new DisconnectedError(`${this.passport.name} is disconnected`));
    return this.hub.adapterState(channelId, { ...options, caller: this.agentId });
  }

  /**
   * Posts a message into a channel: text, or parts (text and data, AG2's `Rendered`: a part or a sequence of strings
   * and parts, sent as `{ text, parts }` with `text` their text rendering); resolves with the admitted envelope's id.
   */
  async send(channelId: string, content: Rendered, options: SendOptions = {}): Promise<string> {
    const ack = await this.sendEnvelope(
      {
        channel_id: channelId,
        event_type: EV_TEXT,
        event_data: textData(content),
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
  ): Promise<PostAck> {
    return tracedSend(envelope, (stamped) => this.#call('post', { ...stamped, sender_id: this.agentId }, options));
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

  /**
   * Whether the channel's protocol lets this identity post `eventType` (default `ag2.msg.text`) now. It says nothing
   * about *which* delivery to answer: see `isMyTurn`.
   */
  canSend(channelId: string, eventType?: string, options?: CallOptions): Promise<boolean> {
    return this.#call('canSend', { channel_id: channelId, event_type: eventType ?? null }, options).then(
      (r) => r.allowed,
    );
  }

  /**
   * Every turn the hub expects from this identity, one per channel where it is the expected speaker
   * (`pendingTurnsFor`); a conversation never expects anyone. In a deployment of several partitions each answers for
   * its own channels: every one is asked, at once, and the turns joined by `expected_at`, then channel id.
   */
  async pendingTurns(options?: CallOptions): Promise<PendingTurn[]> {
    if (this.#disconnected) throw new DisconnectedError(`${this.passport.name} is disconnected`);
    const partitions = await this.hub.partitions(options);
    if (partitions === 1) return (await this.#call('pendingTurnsFor', {}, options)).turns;
    const replies = await Promise.all(
      partitionRange(partitions).map((partition) => this.#call('pendingTurnsFor', {}, { ...options, partition })),
    );
    return mergePendingTurns(replies.map((r) => r.turns));
  }

  /**
   * Whether answering `envelope` now is this identity's turn. The channel's protocol must let it post (`canSend`),
   * and where the hub expects it (a consulting respondent, a discussion's next speaker, a workflow's) `envelope` must
   * be the trigger of that turn (`triggering_envelope_id` of `pendingTurns`): `canSend` alone is not enough, since a
   * discussion may already have moved on to this identity's next turn while an older delivery waits its turn. Where
   * nobody is expected (a conversation), any envelope it may answer. Never its own envelopes nor protocol events
   * (`ag2.channel.*`, `ag2.task.*`). A channel that ends between this check and the answer refuses the answer
   * (`protocol_error`).
   */
  async isMyTurn(envelope: Envelope, options?: CallOptions): Promise<boolean> {
    if (envelope.sender_id === this.agentId || isProtocolEvent(envelope.event_type)) return false;
    // canSend first: once it may send, only its own post moves the channel on (another replica waits for the turn
    // lock), so the expected trigger read next is still the one of this turn.
    if (!(await this.canSend(envelope.channel_id, undefined, options))) return false;
    const expected = (await this.pendingTurns(options)).find((t) => t.channel_id === envelope.channel_id);
    return expected === undefined || expected.triggering_envelope_id === envelope.envelope_id;
  }

  /**
   * The envelope `by.senderId` posted in the channel with `causation_id` = `by.causationId` (e.g. an agent's answer
   * to a trigger), or `null` when there is none this identity may read.
   */
  findEnvelopeByCausation(
    channelId: string,
    by: { readonly senderId: string; readonly causationId: string },
    options?: CallOptions,
  ): Promise<Envelope | null> {
    return this.#call(
      'findEnvelopeByCausation',
      { channel_id: channelId, sender_id: by.senderId, causation_id: by.causationId },
      options,
    ).then((r) => r.envelope);
  }

  /**
   * Subscribes to this participant's deliveries from now on (what arrived before is not replayed): each
   * subscription receives every matching envelope, independently of the others, until it is closed (`close()`,
   * `break`, `await using`) or the participant disconnects. Create it before the action whose answer it waits for.
   */
  subscribe(options: SubscribeOptions = {}): Subscription {
    return this.#subscriptions.subscribe(options);
  }

  /**
   * The next delivery that matches `predicate` (a one-shot subscription: deliveries that do not match stay with the
   * other subscriptions and waits); `EnvelopeTimeoutError` on timeout; `null` when the participant disconnects while
   * waiting. A person's client first looks at its recent deliveries that no wait took yet (see
   * `RECENT_DELIVERIES`), so a wait started right after a send still sees an answer that arrived first.
   */
  async nextEnvelope(options: NextOptions = {}): Promise<Envelope | null> {
    return this.#once({ ...(options.predicate === undefined ? {} : { predicate: options.predicate }) }, options);
  }

  /** Every delivery from now on (`subscribe()` without a filter); the iteration ends when the participant disconnects. */
  envelopes(): Subscription {
    return this.subscribe();
  }

  /** Waits for an envelope of `channelId` that matches `predicate` (default: the channel closed or expired). */
  waitForChannelEvent(channelId: string, options: NextOptions = {}): Promise<Envelope | null> {
    const predicate =
      options.predicate ?? ((e: Envelope) => e.event_type === EV_CHANNEL_CLOSED || e.event_type === EV_CHANNEL_EXPIRED);
    return this.#once({ channelId, predicate }, options);
  }

  async #once(filter: SubscribeOptions, options: ReceiveOptions): Promise<Envelope | null> {
    if (this.#disconnected) throw new DisconnectedError(`${this.passport.name} is disconnected`);
    const recent = this.#takeRecent(filter);
    if (recent !== undefined) return recent;
    const subscription = this.subscribe(filter);
    try {
      const envelope = await subscription.receive(options);
      if (envelope !== null) this.#forgetRecent(envelope);
      return envelope;
    } finally {
      subscription.close();
    }
  }
}
