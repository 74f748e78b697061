/** What `rotatingRounds` collects: every run of each kind, in the order they ran. */
export type RoundResults<R extends Record<string, () => Promise<unknown>>> = {
  readonly [K in keyof R]: Awaited<ReturnType<R[K]>>[];
};

/**
 * Runs each of `runs` `n` times, one after the other, rotating which kind goes first in each round, so that the
 * machine's drift (another process, a warming JIT, a growing stream) falls on every kind alike.
 */
export async function rotatingRounds<R extends Record<string, () => Promise<unknown>>>(
  n: number,
  runs: R,
): Promise<RoundResults<R>> {
  const kinds: (keyof R)[] = Object.keys(runs);
  const out = new Map<keyof R, unknown[]>(kinds.map((k) => [k, []]));
  for (let r = 0; r < n; r += 1) {
    for (let k = 0; k < kinds.length; k += 1) {
      const kind = kinds[(r + k) % kinds.length];
      const run = kind === undefined ? undefined : runs[kind];
      if (kind === undefined || run === undefined) continue;
      out.get(kind)?.push(await run());
    }
  }
  // Each list holds what its own run function resolved to, which is what the mapped type says.
  return Object.fromEntries(out) as RoundResults<R>;
}
