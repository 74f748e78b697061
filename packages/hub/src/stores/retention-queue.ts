/** The longest pause of history retention after failures in a row, ms. */
const MAX_PAUSE_MS = 300_000;

/**
 * The ended channels whose history is still kept, by the time they ended (ms): what history retention removes, oldest
 * first (`expireHistories`). Channels end in about that order, so an addition is an append and a sweep looks at the
 * head only: its work does not grow with the number of ended channels. Hydrate adds them in any order; they are
 * sorted once, at the next look. After a failure (NATS trouble, a purge the hub's NATS user may not make) retention
 * pauses, doubling from 1 s to 5 minutes, so that a refusal costs one request now and then, not one per channel per
 * sweep.
 */
export class RetentionQueue {
  readonly #endedAt = new Map<string, number>();
  /** Entries in end order from `#head` on while `#sorted`; an entry whose time `#endedAt` no longer holds is stale. */
  #order: { readonly id: string; readonly at: number }[] = [];
  #head = 0;
  #sorted = true;
  #failures = 0;
  #pausedUntil = -Infinity;
  /** False on a hub without retention: nothing is noted, so ended channels cost no memory here. */
  #on = true;
  /** A removal run is under way (sweeps may overlap when NATS is slow): another one waits for the next sweep. */
  #running = false;

  /** Notes an ended channel whose history is kept (again: no change). */
  add(channelId: string, endedAtMs: number): void {
    if (!this.#on || this.#endedAt.has(channelId)) return;
    this.#endedAt.set(channelId, endedAtMs);
    const last = this.#order.at(-1);
    if (last !== undefined && last.at > endedAtMs) this.#sorted = false;
    this.#order.push({ id: channelId, at: endedAtMs });
  }

  /** The channel's history is gone: it is no longer due. */
  delete(channelId: string): void {
    this.#endedAt.delete(channelId);
  }

  /** The hub keeps every history: forgets what it noted and notes nothing from now on. */
  off(): void {
    if (!this.#on) return;
    this.clear();
    this.#on = false;
  }

  get size(): number {
    return this.#endedAt.size;
  }

  clear(): void {
    this.#endedAt.clear();
    this.#order = [];
    this.#head = 0;
    this.#sorted = true;
    this.#failures = 0;
    this.#pausedUntil = -Infinity;
  }

  /** Up to `max` channels that ended at or before `endedBy` (ms), oldest first; none while paused at `nowMs`. */
  due(endedBy: number, max: number, nowMs: number): string[] {
    if (nowMs < this.#pausedUntil) return [];
    if (!this.#sorted || (this.#head > 1024 && this.#head * 2 > this.#order.length)) this.#compact();
    while (this.#head < this.#order.length && this.#isStale(this.#head)) this.#head += 1;
    const out: string[] = [];
    for (let i = this.#head; i < this.#order.length && out.length < max; i += 1) {
      const entry = this.#order[i];
      if (entry === undefined || entry.at > endedBy) break;
      if (!this.#isStale(i)) out.push(entry.id);
    }
    return out;
  }

  /** Starts a removal run; false while another one is under way. */
  begin(): boolean {
    if (this.#running) return false;
    this.#running = true;
    return true;
  }

  /** The removal run started by `begin` is over. */
  end(): void {
    this.#running = false;
  }

  /** A removal failed at `nowMs`: pauses retention; returns how many failed in a row. */
  failed(nowMs: number): number {
    this.#failures += 1;
    this.#pausedUntil = nowMs + Math.min(MAX_PAUSE_MS, 1000 * 2 ** Math.min(this.#failures - 1, 20));
    return this.#failures;
  }

  /** A removal succeeded: failures in a row start again from none. */
  succeeded(): void {
    this.#failures = 0;
    this.#pausedUntil = -Infinity;
  }

  #isStale(index: number): boolean {
    const entry = this.#order[index];
    return entry !== undefined && this.#endedAt.get(entry.id) !== entry.at;
  }

  /** Keeps only the live entries, in end order (then id order). */
  #compact(): void {
    this.#order = [...this.#endedAt]
      .map(([id, at]) => ({ id, at }))
      .sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    this.#head = 0;
    this.#sorted = true;
  }
}
