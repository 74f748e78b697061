/** How long a scan waits for more takers after the first one asks, ms: partitions that won their leases together. */
export const SCAN_GATHER_MS = 5;

/** How a `SharedScan` reads and splits what it reads. */
export interface SharedScanOptions<T> {
  /** One pass over the source; started once per round, never twice at once. */
  readonly scan: () => AsyncIterable<T>;
  /** The group an item belongs to (a partition): only that group's takers keep it. */
  readonly groupOf: (item: T) => number;
  /** How long a round waits for more takers after its first one asks, ms; default `SCAN_GATHER_MS`. */
  readonly gatherMs?: number;
}

/** How a pass ended. */
type PassResult = { readonly ok: true } | { readonly ok: false; readonly err: Error };

/** One `take` waiting for its round. */
interface Taker<T> {
  readonly items: T[];
  settle(result: PassResult): void;
}

/** The takers of one pass, by group; the pass has not started while the round is `#next`. */
interface Round<T> {
  readonly takers: Map<number, Set<Taker<T>>>;
  /** When the round's first taker asked (monotonic ms). */
  readonly askedAt: number;
  timer: NodeJS.Timeout | null;
}

/**
 * One pass over a source shared by the takers that ask at about the same time, each receiving its own group's items.
 * A taker only ever joins a pass that starts after it asked: one already running when it asks is not joined, and the
 * taker waits for the next, which starts once the running one ended (and the first asker's gather time passed).
 * This is what lets a partition trust what it reads: nothing written before it asked is missing from its pass.
 * A failed pass fails each of its takers with its error. Nothing is kept once a pass ended: each taker got its own
 * items, and items of groups nobody asked for are dropped as they are read.
 */
export class SharedScan<T> {
  readonly #options: SharedScanOptions<T>;
  readonly #gatherMs: number;
  /** The round gathering takers, not started yet. */
  #next: Round<T> | null = null;
  #running = false;
  #passes = 0;

  constructor(options: SharedScanOptions<T>) {
    this.#options = options;
    this.#gatherMs = options.gatherMs ?? SCAN_GATHER_MS;
  }

  /** How many passes started so far. */
  get passes(): number {
    return this.#passes;
  }

  /**
   * The items of `group` from a pass that starts after this call. Rejects with the pass's error, or with the
   * signal's reason once it aborts (the taker leaves; a pass that nobody waits for any more stops reading).
   */
  take(group: number, options: { readonly signal?: AbortSignal } = {}): Promise<T[]> {
    const { signal } = options;
    if (signal?.aborted === true) return Promise.reject(abortReason(signal));
    const round = this.#next ?? this.#gather();
    return new Promise<T[]>((resolve, reject) => {
      const onAbort = (): void => {
        leave();
        if (signal !== undefined) reject(abortReason(signal));
        if (round === this.#next && round.takers.size === 0) this.#cancel(round);
      };
      const leave = (): void => {
        signal?.removeEventListener('abort', onAbort);
        const same = round.takers.get(group);
        same?.delete(taker);
        if (same?.size === 0) round.takers.delete(group);
      };
      const taker: Taker<T> = {
        items: [],
        settle: (result) => {
          leave();
          if (result.ok) resolve(taker.items);
          else reject(result.err);
        },
      };
      const same = round.takers.get(group) ?? new Set<Taker<T>>();
      same.add(taker);
      round.takers.set(group, same);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #gather(): Round<T> {
    const round: Round<T> = { takers: new Map(), askedAt: performance.now(), timer: null };
    this.#next = round;
    if (!this.#running) this.#schedule(round);
    return round;
  }

  /** Starts `round` once its first taker's gather time passed. */
  #schedule(round: Round<T>): void {
    const wait = Math.max(0, this.#gatherMs - (performance.now() - round.askedAt));
    round.timer = setTimeout(() => void this.#run(round), wait);
  }

  #cancel(round: Round<T>): void {
    if (round.timer !== null) clearTimeout(round.timer);
    this.#next = null;
  }

  async #run(round: Round<T>): Promise<void> {
    this.#next = null;
    this.#running = true;
    this.#passes += 1;
    let result: PassResult = { ok: true };
    try {
      for await (const item of this.#options.scan()) {
        // Every taker left: stop reading (leaving the loop ends the source's pass).
        if (round.takers.size === 0) break;
        const takers = round.takers.get(this.#options.groupOf(item));
        if (takers !== undefined) for (const taker of takers) taker.items.push(item);
      }
    } catch (err) {
      result = { ok: false, err: err instanceof Error ? err : new Error('the scan failed', { cause: err }) };
    } finally {
      this.#running = false;
    }
    for (const takers of [...round.takers.values()]) for (const taker of [...takers]) taker.settle(result);
    const next = this.#next;
    if (next !== null) this.#schedule(next);
  }
}

/** Why `signal` aborted, as an error (an abort without a reason has a `DOMException` as its reason). */
function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error('aborted', { cause: reason });
}
