/**
 * An async queue with cancellable waits: the pull side of a participant's deliveries. It keeps at most `capacity`
 * unread items (the oldest go first), so a participant nobody pulls from does not grow without end. `close()` wakes
 * every waiter with `null`.
 */
export class EnvelopeQueue<T> {
  readonly #items: T[] = [];

  constructor(private readonly capacity = 10_000) {}

  readonly #waiters: { resolve: (v: T | null) => void }[] = [];
  #closed = false;

  push(item: T): void {
    if (this.#closed) return;
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) waiter.resolve(item);
    else {
      this.#items.push(item);
      if (this.#items.length > this.capacity) this.#items.shift();
    }
  }

  /** The next item, or `null` once the queue is closed. Rejects on abort. */
  async next(signal?: AbortSignal): Promise<T | null> {
    const item = this.#items.shift();
    if (item !== undefined) return item;
    if (this.#closed) return null;
    signal?.throwIfAborted();
    return new Promise<T | null>((resolve, reject) => {
      const waiter = {
        resolve: (v: T | null) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(v);
        },
      };
      const onAbort = (): void => {
        const i = this.#waiters.indexOf(waiter);
        if (i >= 0) this.#waiters.splice(i, 1);
        reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  close(): void {
    this.#closed = true;
    for (const w of this.#waiters.splice(0)) w.resolve(null);
  }

  get closed(): boolean {
    return this.#closed;
  }
}
