import {
  ChannelState,
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_INVITE_REJECT,
  participantIds,
  type Envelope,
} from '@ag2net/protocol';
import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { HubContext } from './context.js';
import { finishCloseLocked } from './lifecycle.js';
import { parseStored } from '../nats/wal.js';

/**
 * Fans every admitted envelope out to its audience's durable inboxes, from a durable consumer over the WAL. The
 * consumer's ack floor is the delivery state: after a crash, whatever was admitted but not yet fanned out is
 * redelivered, and the inbox messages' ids (`<envelope_id>.<agent_id>`) make the repeat harmless.
 */
export class Deliverer {
  #messages: ConsumerMessages | null = null;
  #loop: Promise<void> | null = null;

  constructor(private readonly ctx: HubContext) {}

  async start(): Promise<void> {
    const consumer = await this.ctx.js.consumers.get(this.ctx.names.walStream, this.ctx.names.deliveryConsumer);
    this.#messages = await consumer.consume({ max_messages: 512 });
    this.#loop = this.#run(this.#messages);
  }

  async stop(): Promise<void> {
    this.#messages?.stop();
    await this.#loop;
    this.#messages = null;
    this.#loop = null;
  }

  async #run(messages: ConsumerMessages): Promise<void> {
    for await (const m of messages) {
      try {
        const envelope = parseStored(m.string());
        await this.#fanOut(envelope, m);
        m.ack();
        if (m.seq > this.ctx.deliveredThrough) this.ctx.deliveredThrough = m.seq;
        this.#maybeFinishClose(envelope);
      } catch (err) {
        this.ctx.logger.error({ err, streamSeq: m.seq }, 'delivery failed; will retry');
        m.nak(1000);
      }
    }
  }

  async #fanOut(envelope: Envelope, m: JsMsg): Promise<void> {
    const recipients = recipientsOf(this.ctx, envelope);
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
