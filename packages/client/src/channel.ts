import {
  EV_TEXT,
  isTerminalChannelState,
  textData,
  type ChannelMetadata,
  type Envelope,
  type Rendered,
} from '@ag2net/protocol';
import type { CallOptions } from './rpc.js';
import type { ChannelOwner, SendOptions } from './contracts.js';

/** A channel as one participant sees it. */
export class Channel {
  #metadata: ChannelMetadata;

  constructor(
    metadata: ChannelMetadata,
    private readonly owner: ChannelOwner,
  ) {
    this.#metadata = metadata;
  }

  get channelId(): string {
    return this.#metadata.channel_id;
  }

  /** The metadata as last fetched (`info()` refreshes it). */
  get metadata(): ChannelMetadata {
    return this.#metadata;
  }

  get state(): ChannelMetadata['state'] {
    return this.#metadata.state;
  }

  /**
   * Posts text or parts (see `Participant.send`), or another event with `eventType`/`eventData`; resolves with the
   * admitted envelope's id.
   */
  async send(
    content: Rendered,
    options: SendOptions & { readonly eventType?: string; readonly eventData?: Record<string, unknown> } = {},
  ): Promise<string> {
    if (options.eventType === undefined && options.eventData === undefined) {
      return this.owner.send(this.channelId, content, options);
    }
    const ack = await this.owner.sendEnvelope(
      {
        channel_id: this.channelId,
        event_type: options.eventType ?? EV_TEXT,
        event_data: options.eventData ?? textData(content),
        audience: options.audience ? [...options.audience] : null,
        causation_id: options.causationId ?? null,
        depth: options.depth ?? 0,
      },
      options,
    );
    return ack.envelope_id;
  }

  /** Refreshes and returns the metadata. */
  async info(options?: CallOptions): Promise<ChannelMetadata> {
    this.#metadata = await this.owner.getChannel(this.channelId, options);
    return this.#metadata;
  }

  /** Closes the channel (it drains first); resolves with the ended metadata. */
  async close(reason = '', options?: CallOptions): Promise<ChannelMetadata> {
    this.#metadata = await this.owner.closeChannel(this.channelId, reason, options);
    return this.#metadata;
  }

  isTerminal(): boolean {
    return isTerminalChannelState(this.#metadata.state);
  }

  /** The envelopes of this channel the owner may see, from sequence `since`. */
  read(since = 1, options?: CallOptions): Promise<Envelope[]> {
    return this.owner.readWal(this.channelId, { since }, options);
  }
}
