import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SharedScan } from './shared-scan.js';

const GATHER_MS = 5;

/**
 * A source whose passes are numbered from 1 and wait to be opened: pass `n` yields `<n>:<group>:<name>` for each of
 * `items`, then throws `failWith(n)` when that is an error.
 */
class Source {
  started = 0;
  /** Items yielded, over every pass. */
  read = 0;
  /** Passes that ended (read through, failed or stopped by their reader). */
  ended = 0;
  readonly #gates = new Map<number, () => void>();

  constructor(
    private readonly items: readonly string[],
    private readonly failWith: (pass: number) => Error | null = () => null,
  ) {}

  readonly scan = (): AsyncIterable<string> => this.#pass(++this.started);

  /** Lets pass `n` read. */
  open(n: number): void {
    const gate = this.#gates.get(n);
    if (gate === undefined) throw new Error(`pass ${n} has not started`);
    gate();
  }

  async *#pass(n: number): AsyncGenerator<string> {
    try {
      await new Promise<void>((resolve) => this.#gates.set(n, resolve));
      for (const item of this.items) {
        this.read += 1;
        yield `${n}:${item}`;
      }
      const err = this.failWith(n);
      if (err !== null) throw err;
    } finally {
      this.ended += 1;
    }
  }
}

const groupOf = (item: string): number => Number(item.split(':')[1]);

function sharedOver(source: Source): SharedScan<string> {
  return new SharedScan({ scan: source.scan, groupOf, gatherMs: GATHER_MS });
}

/** What a settled promise came to, for exact assertions on rejections. */
async function outcome<T>(promise: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; err: unknown }> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (err: unknown) => ({ ok: false as const, err }),
  );
}

describe('SharedScan', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('takers that ask within the gather time share one pass, each receiving its own group’s items', async () => {
    const source = new Source(['0:a', '1:b', '2:c', '0:d', '3:e']);
    const shared = sharedOver(source);
    const first = shared.take(0);
    await vi.advanceTimersByTimeAsync(GATHER_MS - 1);
    const second = shared.take(1);
    const third = shared.take(3);
    expect(source.started).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(source.started).toBe(1);
    source.open(1);
    expect(await Promise.all([first, second, third])).toEqual([['1:0:a', '1:0:d'], ['1:1:b'], ['1:3:e']]);
    expect([shared.passes, source.read, source.ended]).toEqual([1, 5, 1]);
  });

  it('a taker that asks while a pass runs waits for the next pass, and those asking meanwhile join it', async () => {
    const source = new Source(['0:a', '1:b', '2:c']);
    const shared = sharedOver(source);
    const early = shared.take(0);
    await vi.advanceTimersByTimeAsync(GATHER_MS);
    expect(source.started).toBe(1);
    const late = shared.take(1);
    await vi.advanceTimersByTimeAsync(50);
    const later = shared.take(2);
    // The running pass is never joined, and the next one does not start beside it.
    expect(source.started).toBe(1);
    source.open(1);
    expect(await early).toEqual(['1:0:a']);
    await vi.advanceTimersByTimeAsync(GATHER_MS);
    expect(source.started).toBe(2);
    source.open(2);
    expect(await Promise.all([late, later])).toEqual([['2:1:b'], ['2:2:c']]);
    expect(shared.passes).toBe(2);
  });

  it('a failed pass fails every taker that joined it with its error, and the next take reads afresh', async () => {
    const failure = new Error('bucket unavailable');
    const source = new Source(['0:a', '1:b'], (n) => (n === 1 ? failure : null));
    const shared = sharedOver(source);
    const takers = [outcome(shared.take(0)), outcome(shared.take(1))];
    await vi.advanceTimersByTimeAsync(GATHER_MS);
    source.open(1);
    expect(await Promise.all(takers)).toEqual([
      { ok: false, err: failure },
      { ok: false, err: failure },
    ]);
    const again = shared.take(1);
    await vi.advanceTimersByTimeAsync(GATHER_MS);
    source.open(2);
    expect(await again).toEqual(['2:1:b']);
    expect([shared.passes, source.ended]).toEqual([2, 2]);
  });

  it('a taker whose signal aborts leaves: with nobody else waiting no pass starts, or the pass stops reading', async () => {
    const source = new Source(['0:a', '1:b', '0:c']);
    const shared = sharedOver(source);
    // Aborted already: refused at once.
    const stopped = new AbortController();
    stopped.abort(new Error('stopped before asking'));
    expect(await outcome(shared.take(0, { signal: stopped.signal }))).toEqual({
      ok: false,
      err: new Error('stopped before asking'),
    });
    // Leaves before the pass starts, alone: no pass.
    const before = new AbortController();
    const leaving = outcome(shared.take(0, { signal: before.signal }));
    before.abort(new Error('term ended'));
    expect(await leaving).toEqual({ ok: false, err: new Error('term ended') });
    await vi.advanceTimersByTimeAsync(10 * GATHER_MS);
    expect(shared.passes).toBe(0);
    // Leaves before the pass starts, beside another taker: the other one still gets its items.
    const one = new AbortController();
    const gone = outcome(shared.take(0, { signal: one.signal }));
    const stays = shared.take(1);
    one.abort(new Error('handed over'));
    await vi.advanceTimersByTimeAsync(GATHER_MS);
    source.open(1);
    expect(await stays).toEqual(['1:1:b']);
    expect(await gone).toEqual({ ok: false, err: new Error('handed over') });
    // Every taker leaves while the pass runs: it stops at its next item.
    const during = new AbortController();
    const left = outcome(shared.take(0, { signal: during.signal }));
    await vi.advanceTimersByTimeAsync(GATHER_MS);
    expect(source.started).toBe(2);
    during.abort(new Error('closing'));
    expect(await left).toEqual({ ok: false, err: new Error('closing') });
    source.open(2);
    await vi.waitFor(() => expect(source.ended).toBe(2));
    // Pass 1 read its three items; pass 2 one, which nobody took.
    expect([shared.passes, source.read]).toEqual([2, 4]);
  });
});
