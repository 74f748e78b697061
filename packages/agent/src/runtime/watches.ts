import type { Envelope } from '@ag2net/protocol';

/** A watch on one channel: the envelopes that matched, in arrival order. */
export interface ChannelWatch {
  /** The next matching envelope; rejects with the signal's reason when it aborts. */
  next(signal?: AbortSignal): Promise<Envelope>;
  /** Ends the watch; the channel's envelopes go to the handler again. */
  close(): void;
}

interface Watch {
  readonly predicate: (envelope: Envelope) => boolean;
  readonly matched: Envelope[];
  wake: (() => void) | null;
}

/**
 * Channels a tool is waiting on (delegate waits for the consultant's reply). The default handler offers every
 * delivery here first: a watched channel's envelopes go to the watch, never to an LLM turn (AG2 suppresses the
 * handler for the channel). One per agent, so that concurrent waits in different channels never take each
 * other's envelopes.
 */
export class ChannelWatches {
  readonly #watches = new Map<string, Watch>();

  /** Starts watching `channelId` for envelopes matching `predicate`; call before the envelope can arrive. */
  watch(channelId: string, predicate: (envelope: Envelope) => boolean): ChannelWatch {
    const watch: Watch = { predicate, matched: [], wake: null };
    this.#watches.set(channelId, watch);
    return {
      next: (signal) => next(watch, signal),
      close: () => {
        if (this.#watches.get(channelId) === watch) this.#watches.delete(channelId);
      },
    };
  }

  /** Hands `envelope` to the watch of its channel; true when the channel is watched (matching or not). */
  offer(envelope: Envelope): boolean {
    const watch = this.#watches.get(envelope.channel_id);
    if (watch === undefined) return false;
    if (watch.predicate(envelope)) {
      watch.matched.push(envelope);
      watch.wake?.();
    }
    return true;
  }
}

async function next(watch: Watch, signal?: AbortSignal): Promise<Envelope> {
  for (;;) {
    const envelope = watch.matched.shift();
    if (envelope !== undefined) return envelope;
    signal?.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      const onAbort = (): void => reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      watch.wake = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }).finally(() => {
      watch.wake = null;
    });
  }
}
