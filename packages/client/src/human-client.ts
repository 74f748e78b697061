import { CloseReason, type ChannelMetadata, type Envelope, type Passport } from '@ag2net/protocol';
import type { ParticipantHub } from './contracts.js';
import type { DeliveryOutcome } from './inbox.js';
import { ackInvite, isInviteFor } from './invites.js';
import { Participant } from './participant.js';
import type { CallOptions } from './rpc.js';

/** A callback for a human's deliveries; several compose, in the order they were added. */
export type HumanCallback = (envelope: Envelope) => void | Promise<void>;

/** Options of a human participant. */
export interface HumanClientOptions {
  /** Accept invites automatically; default true. */
  readonly autoAckInvites?: boolean;
}

/**
 * A person on the network (kind `human`): deliveries go to push callbacks (`onEnvelope`) and to the subscriptions
 * open at the time (`subscribe`, `nextEnvelope`, `waitForChannelEvent`); invites are accepted automatically unless
 * turned off. A callback that throws is logged and the delivery is acked all the same.
 */
export class HumanClient extends Participant {
  readonly #callbacks: HumanCallback[] = [];
  readonly #autoAck: boolean;

  private constructor(hub: ParticipantHub, passport: Passport, options: HumanClientOptions) {
    super(hub, passport);
    this.#autoAck = options.autoAckInvites ?? true;
  }

  /** @internal Built by `HubClient.registerHuman`. */
  static async start(hub: ParticipantHub, passport: Passport, options: HumanClientOptions): Promise<HumanClient> {
    const client = new HumanClient(hub, passport, options);
    await client.startConsuming();
    return client;
  }

  /** A person's waits also see the recent deliveries no wait took yet (send, then wait for the answer). */
  protected override keepsRecentDeliveries(): boolean {
    return true;
  }

  /** Adds a push callback. */
  onEnvelope(callback: HumanCallback): void {
    this.#callbacks.push(callback);
  }

  removeEnvelopeCallback(callback: HumanCallback): void {
    const i = this.#callbacks.indexOf(callback);
    if (i >= 0) this.#callbacks.splice(i, 1);
  }

  /** Closes a channel; the default reason is `human_closed`. */
  override closeChannel(
    channelId: string,
    reason: string = CloseReason.HumanClosed,
    options?: CallOptions,
  ): Promise<ChannelMetadata> {
    return super.closeChannel(channelId, reason, options);
  }

  protected async handle(envelope: Envelope): Promise<DeliveryOutcome> {
    if (this.#autoAck && isInviteFor(this, envelope)) {
      await ackInvite(this, envelope).catch((err: unknown) =>
        this.hub.logger.warn({ err, channelId: envelope.channel_id }, 'invite ack failed'),
      );
    }
    for (const callback of [...this.#callbacks]) {
      try {
        await callback(envelope);
      } catch (err) {
        this.hub.logger.error({ err, agent: this.passport.name, agentId: this.agentId }, 'envelope callback failed');
      }
    }
    return { settle: 'ack' };
  }
}
