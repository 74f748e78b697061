/**
 * A map that keeps only its `capacity` most recently set keys: what a channel needs to answer retries and causation
 * lookups of recent envelopes, at a memory cost that does not grow with the channel's history. Setting a key again
 * makes it the most recent; setting one past capacity forgets the least recent.
 */
export class RecentWindow<V> {
  readonly #entries = new Map<string, V>();

  constructor(readonly capacity: number) {}

  get(key: string): V | undefined {
    return this.#entries.get(key);
  }

  set(key: string, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.capacity) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
  }

  clear(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Least recent first. */
  entries(): IterableIterator<[string, V]> {
    return this.#entries.entries();
  }
}
