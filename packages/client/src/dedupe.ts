/** Remembers the last `capacity` ids, to drop redelivered duplicates (delivery is at-least-once). */
export class RecentIds {
  readonly #ids = new Set<string>();

  constructor(private readonly capacity = 10_000) {}

  /** Records `id`; false when it was already seen. */
  add(id: string): boolean {
    if (this.#ids.has(id)) return false;
    this.#ids.add(id);
    if (this.#ids.size > this.capacity) {
      const oldest = this.#ids.values().next();
      if (oldest.done !== true) this.#ids.delete(oldest.value);
    }
    return true;
  }

  has(id: string): boolean {
    return this.#ids.has(id);
  }
}
