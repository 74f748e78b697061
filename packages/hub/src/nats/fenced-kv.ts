import { UnavailableError } from '@ag2net/protocol';
import type { KV, KvEntry } from '@nats-io/kv';

/** The answer to every write this hub no longer may make: the WAL's, the turn locks', the KV records'. */
export function leaseLapsed(): UnavailableError {
  return new UnavailableError('this hub no longer holds the writer lease; retry');
}

/** The reads and writes the hub's stores make on a KV bucket that only the active hub writes. */
export interface FencedKv {
  get(key: string): Promise<KvEntry | null>;
  keys(filter?: string): ReturnType<KV['keys']>;
  put(key: string, value: string): Promise<number>;
  create(key: string, value: string): Promise<number>;
  purge(key: string): Promise<void>;
  /** Whether a write may be made now. */
  mayWrite(): boolean;
}

/**
 * A KV bucket written under the writer lease: reads pass through; every write first asks `mayWrite` (the lease, by
 * this hub's own clock, as every WAL append does) and is refused with `UnavailableError` once it says no, so a hub
 * that lost its lease while a request was in admission (paused, or waiting on a stalled NATS) writes no agent, channel
 * or task record its successor does not know of. What it cannot stop is a write sent while the lease held that NATS
 * stores more than the lease's safety margin later (docs/architecture.md, "What is fenced by what").
 */
export function fencedKv(kv: KV, mayWrite: () => boolean): FencedKv {
  const check = (): void => {
    if (!mayWrite()) throw leaseLapsed();
  };
  return {
    get: (key) => kv.get(key),
    keys: (filter) => kv.keys(filter),
    async put(key, value) {
      check();
      return kv.put(key, value);
    },
    async create(key, value) {
      check();
      return kv.create(key, value);
    },
    async purge(key) {
      check();
      await kv.purge(key);
    },
    mayWrite,
  };
}
