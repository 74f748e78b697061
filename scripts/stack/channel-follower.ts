import type { Channel, HumanClient } from '@ag2net/client';
import { EV_CHANNEL_CLOSED, EV_CHANNEL_EXPIRED, type Envelope } from '@ag2net/protocol';

/** How often a wait reads the channel's log for more. */
const POLL_MS = 100;

/**
 * Follows the demo's channels by reading their logs as the person, not by taking the person's inbox deliveries: the
 * person may be signed in to the web console at the same time, and the bridge's connection consumes the same inbox,
 * so a delivery may go to either. The log is the same for both. Every envelope of a channel is handed to `onEnvelope`
 * once, in sequence order, as it is read; waits look at each envelope once, in order, from where the last wait
 * stopped.
 */
export class ChannelFollower {
  readonly #you: HumanClient;
  readonly #timeoutMs: number;
  readonly #onEnvelope: (e: Envelope) => void;
  /** Per channel: the last sequence read, and the envelopes read that no wait looked at yet. */
  readonly #read = new Map<string, { last: number; unseen: Envelope[] }>();

  constructor(options: {
    readonly you: HumanClient;
    readonly timeoutMs: number;
    readonly onEnvelope: (e: Envelope) => void;
  }) {
    this.#you = options.you;
    this.#timeoutMs = options.timeoutMs;
    this.#onEnvelope = options.onEnvelope;
  }

  /** The channel's first envelope from now on that `predicate` accepts; throws after the timeout. */
  async until(channel: Channel, predicate: (e: Envelope) => boolean, what: string): Promise<Envelope> {
    const deadline = Date.now() + this.#timeoutMs;
    for (;;) {
      const state = await this.#readMore(channel.channelId);
      while (state.unseen.length > 0) {
        const e = state.unseen.shift();
        if (e !== undefined && predicate(e)) return e;
      }
      if (Date.now() > deadline) throw new Error(`no ${what} within ${this.#timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  /** The channel's close (or expiry) envelope. */
  closed(channel: Channel): Promise<Envelope> {
    return this.until(
      channel,
      (e) => e.event_type === EV_CHANNEL_CLOSED || e.event_type === EV_CHANNEL_EXPIRED,
      `close of the ${channel.metadata.manifest.type} channel`,
    );
  }

  async #readMore(channelId: string): Promise<{ last: number; unseen: Envelope[] }> {
    let state = this.#read.get(channelId);
    if (state === undefined) {
      state = { last: 0, unseen: [] };
      this.#read.set(channelId, state);
    }
    for (const e of await this.#you.readWal(channelId, { since: state.last + 1 })) {
      state.last = Math.max(state.last, e.sequence ?? state.last);
      state.unseen.push(e);
      this.#onEnvelope(e);
    }
    return state;
  }
}
