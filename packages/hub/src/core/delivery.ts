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

/**
 * Fans every admitted envelope out to its audience's durable inboxes, from a durable consumer over the WAL, and
 * writes the audit records the WAL implies (channel created, closed, expired; expectation violated). The consumer's
 * ack floor is the delivery state: after a crash, whatever was admitted but not yet fanned out is redelivered, and
 * the inbox messages' ids (`<envelope_id>.<agent_id>`) and the audit records' ids make the repeat harmless.
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
        await auditFromWal(this.ctx, envelope);
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
