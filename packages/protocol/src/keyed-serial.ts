/**
 * Runs tasks one at a time per key, and tasks of different keys concurrently: per-channel serialization with
 * pipelining across channels. A failed task does not stop the ones queued after it.
 */
export class KeyedSerial {
  readonly #tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    void tail.then(() => {
      // Forget the key once nothing is queued behind this task, so idle channels cost nothing.
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }

  /** Keys with work queued or running. */
  get size(): number {
    return this.#tails.size;
  }

  /** Resolves when everything queued so far has finished. */
  async idle(): Promise<void> {
    await Promise.all([...this.#tails.values()]);
  }
}
