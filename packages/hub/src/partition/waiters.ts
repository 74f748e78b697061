import type { ChannelMetadata, HubError } from '@ag2net/protocol';

interface Waiter {
  readonly resolve: (metadata: ChannelMetadata) => void;
  readonly reject: (err: HubError) => void;
}

/** Callers waiting for a channel to open (create) or to end (close). */
export class ChannelWaiters {
  readonly #open = new Map<string, Waiter[]>();
  readonly #end = new Map<string, Waiter[]>();

  /** Resolves when the channel becomes active, rejects if it ends during the handshake. */
  untilOpen(channelId: string): Promise<ChannelMetadata> {
    return new Promise((resolve, reject) => push(this.#open, channelId, { resolve, reject }));
  }

  /** Resolves when the channel becomes closed or expired. */
  untilEnd(channelId: string): Promise<ChannelMetadata> {
    return new Promise((resolve, reject) => push(this.#end, channelId, { resolve, reject }));
  }

  opened(metadata: ChannelMetadata): void {
    for (const w of take(this.#open, metadata.channel_id)) w.resolve(metadata);
  }

  failedToOpen(channelId: string, err: HubError): void {
    for (const w of take(this.#open, channelId)) w.reject(err);
  }

  ended(metadata: ChannelMetadata): void {
    for (const w of take(this.#end, metadata.channel_id)) w.resolve(metadata);
  }

  /** Rejects everyone (the hub stops serving). */
  abort(err: HubError): void {
    for (const map of [this.#open, this.#end]) {
      for (const list of map.values()) for (const w of list) w.reject(err);
      map.clear();
    }
  }
}

function push(map: Map<string, Waiter[]>, key: string, waiter: Waiter): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [waiter]);
  else list.push(waiter);
}

function take(map: Map<string, Waiter[]>, key: string): Waiter[] {
  const list = map.get(key) ?? [];
  map.delete(key);
  return list;
}
