import { describe, expect, it } from 'vitest';
import { balancedOwners, mix32 } from './assignment.js';

function counts(owners: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const id of owners) out[id] = (out[id] ?? 0) + 1;
  return out;
}

describe('balancedOwners', () => {
  it('gives every live hub floor(P/n) or ceil(P/n) partitions, whatever the ids look like', () => {
    const sets = [['A', 'B'], ['hub-a', 'hub-b', 'hub-c'], ['h1', 'h2', 'h3', 'h4'], ['x'], ['a', 'b', 'c', 'd', 'e']];
    for (const ids of sets) {
      for (const p of [1, 8, 16, 64]) {
        const owners = balancedOwners(ids, p);
        expect(owners).toHaveLength(p);
        const c = counts(owners);
        const shares = ids.map((id) => c[id] ?? 0);
        expect(shares.reduce((a, b) => a + b, 0)).toBe(p);
        for (const share of shares) {
          expect(share).toBeGreaterThanOrEqual(Math.floor(p / ids.length));
          expect(share).toBeLessThanOrEqual(Math.ceil(p / ids.length));
        }
      }
    }
  });

  it('is the same for the same live set in any order, and one hub owns everything alone', () => {
    expect(balancedOwners(['h3', 'h1', 'h2'], 16)).toEqual(balancedOwners(['h1', 'h2', 'h3'].reverse().sort(), 16));
    expect(balancedOwners(['solo'], 8)).toEqual(Array.from({ length: 8 }, () => 'solo'));
    expect(balancedOwners([], 8)).toEqual([]);
  });

  it('moves about P/n partitions when a hub joins, and only to the hub that joined', () => {
    const before = balancedOwners(['h1', 'h2', 'h3'], 16);
    const after = balancedOwners(['h1', 'h2', 'h3', 'h4'], 16);
    const moved = after.filter((owner, k) => owner !== before[k]);
    expect(moved.filter((owner) => owner === 'h4')).toHaveLength(4);
    // The cap may shift a partition or two between the others; never most of them.
    expect(moved.length).toBeLessThanOrEqual(8);
  });

  it('mixes ids that differ in one character into unrelated scores', () => {
    expect(mix32(0)).toBe(0);
    expect(mix32(1)).toBe(0x514e28b7);
    expect(mix32(0xffffffff)).toBe(0x81f16f39);
  });
});
