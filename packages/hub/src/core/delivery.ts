import {
  ChannelState,
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_INVITE_REJECT,
  EV_EXPECTATION_VIOLATED,
  isChannelProtocolEvent,
  participantIds,
  type Envelope,
} from '@ag2net/protocol';
import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { auditFromWal } from '../audit/wal-records.js';
import type { HubContext } from './context.js';
import { finishCloseLocked } from './lifecycle.js';
import { parseStored } from '../nats/wal.js';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Fans every admitted envelope out to its audience's durable inboxes, from a durable consumer over the WAL, and
 * writes the audit records the WAL implies (channel created, closed, expired; expectation violated). The consumer's
 * ack floor is the delivery state: after a crash, whatever was admitted but not yet fanned out is redelivered, and
 * the inbox messages' ids (`<envelope_id>.<agent_id>`) and the audit records' ids make the repeat harmless.
 */
/** How many WAL messages are fanned out at once (different channels in parallel, one channel in order). */
const WINDOW = 256;

/** One WAL message on its way through the window. */
interface InFlight {
  readonly msg: JsMsg;
  /** `delivered` once fanned out; `skipped` for a message that is no envelope; `stopped` when the hub stopped. */
  outcome: 'pending' | 'delivered' | 'skipped' | 'stopped';
  envelope: Envelope | null;
}

export class Deliverer {
  #messages: ConsumerMessages | null = null;
  #loop: Promise<void> | null = null;
  #stopping = false;
  readonly #window: InFlight[] = [];
  readonly #chains = new Map<string, Promise<void>>();
  #roomWaiters: (() => void)[] = [];

  constructor(private readonly ctx: HubContext) {}

  async start(): Promise<void> {
    this.#stopping = false;
    const consumer = await this.ctx.js.consumers.get(this.ctx.names.walStream, this.ctx.names.deliveryConsumer);
    this.#messages = await consumer.consume({ max_messages: 512 });
    this.#loop = this.#run(this.#messages);
  }

  /** Settles when the consume loop of the current `start` ends (also after `stop`); never before `start`. */
  closed(): Promise<void> {
    return this.#loop ?? new Promise(() => undefined);
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    for (const resolve of this.#roomWaiters.splice(0)) resolve();
    this.#messages?.stop();
    await this.#loop;
    this.#messages = null;
    this.#loop = null;
  }

  /**
   * Fans messages out concurrently across channels, in order within a channel (so every inbox sees a channel's
   * envelopes in log order), and acks them in stream order: the consumer's ack floor and `deliveredThrough` stay
   * contiguous, so after a crash everything past the floor is delivered again and nothing before it is missed.
   */
  async #run(messages: ConsumerMessages): Promise<void> {
    for await (const msg of messages) {
      while (this.#window.length >= WINDOW && !this.#stopping) {
        await new Promise<void>((resolve) => this.#roomWaiters.push(resolve));
      }
      const item: InFlight = { msg, outcome: 'pending', envelope: null };
      this.#window.push(item);
      this.#schedule(item);
    }
    await Promise.all([...this.#chains.values()]);
    this.#window.length = 0;
    for (const resolve of this.#roomWaiters.splice(0)) resolve();
  }

  #schedule(item: InFlight): void {
    let envelope: Envelope;
    try {
      envelope = parseStored(item.msg.string());
    } catch (err) {
      this.ctx.logger.error({ err, streamSeq: item.msg.seq }, 'WAL message is not an envelope; skipping it');
      item.outcome = 'skipped';
      this.#pump();
      return;
    }
    item.envelope = envelope;
    const channelId = envelope.channel_id;
    const chain = (this.#chains.get(channelId) ?? Promise.resolve()).then(async () => {
      item.outcome = (await this.#deliver(envelope, item.msg)) ? 'delivered' : 'stopped';
      this.#pump();
    });
    this.#chains.set(channelId, chain);
    void chain.then(() => {
      if (this.#chains.get(channelId) === chain) this.#chains.delete(channelId);
    });
  }

  /** Fans one envelope out and writes its audit records, retrying until it succeeds; false if the hub stopped. */
  async #deliver(envelope: Envelope, msg: JsMsg): Promise<boolean> {
    for (let attempt = 0; ; attempt += 1) {
      if (this.#stopping) return false;
      try {
        await this.#fanOut(envelope, msg);
        await auditFromWal(this.ctx, envelope);
        return true;
      } catch (err) {
        this.ctx.logger.error({ err, streamSeq: msg.seq, attempt }, 'delivery failed; retrying');
        await sleep(Math.min(100 * 2 ** attempt, 2000));
      }
    }
  }

  /** Acks the finished messages at the head of the window, in stream order, and ends channels that drained. */
  #pump(): void {
    while (this.#window.length > 0) {
      const head = this.#window[0];
      if (head === undefined || head.outcome === 'pending' || head.outcome === 'stopped') break;
      this.#window.shift();
      head.msg.ack();
      if (head.msg.seq > this.ctx.deliveredThrough) this.ctx.deliveredThrough = head.msg.seq;
      if (head.envelope !== null) this.#maybeFinishClose(head.envelope);
    }
    if (this.#window.length < WINDOW || this.#stopping) for (const resolve of this.#roomWaiters.splice(0)) resolve();
  }

  async #fanOut(envelope: Envelope, m: JsMsg): Promise<void> {
    const recipients = await allowedRecipients(this.ctx, envelope);
    await Promise.all(
      recipients.map((rid) =>
        this.ctx.js.publish(this.ctx.names.inbox(rid), m.data, { msgID: `${envelope.envelope_id}.${rid}` }),
      ),
    );
  }

  /** A closing channel whose admitted envelopes are all delivered ends now. */
  #maybeFinishClose(envelope: Envelope): void {
    const rt = this.ctx.channels.get(envelope.channel_id);
    if (rt === undefined || rt.metadata.state !== ChannelState.Closing || rt.closingAt === null) return;
    if ((envelope.sequence ?? 0) < rt.closingAt) return;
    void this.ctx.serial
      .run(envelope.channel_id, () => finishCloseLocked(this.ctx, rt))
      .catch((err: unknown) =>
        this.ctx.logger.error({ err, channelId: envelope.channel_id }, 'closing a channel failed'),
      );
  }
}

/**
 * Who receives an envelope: its recipients (`recipientsOf`) that the arbiter lets it reach. The arbiter (by default
 * each recipient's `inbound_from`, read now, so a rule tightened mid-channel applies at once) filters what agents
 * send; what the hub writes (channel protocol events, violation records) always reaches its audience.
 */
async function allowedRecipients(ctx: HubContext, envelope: Envelope): Promise<string[]> {
  const recipients = recipientsOf(ctx, envelope);
  const sender = ctx.registry.get(envelope.sender_id);
  if (sender === undefined || isHubWritten(envelope)) return recipients;
  const allowed: string[] = [];
  for (const id of recipients) {
    const recipient = ctx.registry.get(id);
    if (recipient === undefined) continue;
    if (id === envelope.sender_id) {
      allowed.push(id);
      continue;
    }
    const decision = await ctx.arbiter.authorizeDispatch({ envelope, sender, recipient });
    if (decision.allow) allowed.push(id);
  }
  return allowed;
}

function isHubWritten(envelope: Envelope): boolean {
  return isChannelProtocolEvent(envelope.event_type) || envelope.event_type === EV_EXPECTATION_VIOLATED;
}

/**
 * Who receives an envelope: its audience, or every participant but the sender for a broadcast; registered agents
 * only, each once. Invite acks and rejects go to nobody (AG2 does not dispatch them).
 */
export function recipientsOf(ctx: HubContext, envelope: Envelope): string[] {
  if (envelope.event_type === EV_CHANNEL_INVITE_ACK || envelope.event_type === EV_CHANNEL_INVITE_REJECT) return [];
  let ids: readonly string[];
  if (envelope.audience !== null) ids = envelope.audience;
  else {
    const rt = ctx.channels.get(envelope.channel_id);
    ids = rt === undefined ? [] : participantIds(rt.metadata).filter((id) => id !== envelope.sender_id);
  }
  return [...new Set(ids)].filter((id) => ctx.registry.get(id) !== undefined);
}
