import { newId, partitionOf } from '@ag2net/protocol';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { HostProcess } from '../host/client.js';

/** A host process and the hub it runs. */
export interface RunningHub {
  readonly host: HostProcess;
  readonly hubId: string;
}

/** Which partitions each hub serves now, by hub id. */
export type Holdings = ReadonlyMap<string, readonly number[]>;

/** How often the hubs are asked what they serve while the bench waits for an assignment, ms. */
const POLL_MS = 20;

/** What each hub serves now, asked of every host. */
export async function holdingsOf(hubs: readonly RunningHub[]): Promise<Holdings> {
  const states = await Promise.all(hubs.map((h) => h.host.call('hubState', {})));
  return new Map(states.map((s) => [s.hub_id, s.held]));
}

/**
 * Whether the hubs have settled on an assignment: every partition served by exactly one of them, and each serving
 * its fair share, `floor(P/n)` or `ceil(P/n)` of them, as the hubs' balanced assignment gives every live hub. (The
 * bench does not recompute which partitions each hub should own: that rule is the hub's.)
 */
export function isSettled(holdings: Holdings, partitions: number): boolean {
  const n = holdings.size;
  if (n === 0) return false;
  const floor = Math.floor(partitions / n);
  const ceil = Math.ceil(partitions / n);
  const served = [...holdings.values()].flat().sort((a, b) => a - b);
  if (served.length !== partitions || !served.every((k, i) => k === i)) return false;
  return [...holdings.values()].every((held) => held.length === floor || held.length === ceil);
}

/** The partitions whose holder differs between two views (a partition nobody held counts as moved). */
export function movedBetween(before: Holdings, after: Holdings): number[] {
  const holderOf = (h: Holdings): Map<number, string> => {
    const out = new Map<number, string>();
    for (const [id, held] of h) for (const k of held) out.set(k, id);
    return out;
  };
  const was = holderOf(before);
  return [...holderOf(after)]
    .filter(([k, id]) => was.get(k) !== id)
    .map(([k]) => k)
    .sort((a, b) => a - b);
}

/**
 * How long the hubs' holdings must stay the same and settled before the bench believes them, ms: longer than the
 * hubs' rebalancing step (a third of the 6 s lease), so that a balanced moment between two hand-overs is not taken
 * for the end.
 */
export const STABLE_MS = 2_500;

/**
 * Polls the hubs until they settled (`isSettled`) and stayed so, unchanged, for `STABLE_MS`; returns the moment that
 * final state began (`performance.now()`). `onPoll` sees every view. Throws after `timeoutMs`, naming what each hub
 * served last.
 */
export async function untilSettled(
  hubs: readonly RunningHub[],
  partitions: number,
  options: {
    readonly timeoutMs: number;
    readonly onPoll?: (holdings: Holdings, at: number) => void;
  },
): Promise<number> {
  const { timeoutMs, onPoll } = options;
  const started = performance.now();
  let stableKey = '';
  let stableSince = Number.NaN;
  for (;;) {
    const holdings = await holdingsOf(hubs);
    const now = performance.now();
    onPoll?.(holdings, now);
    const key = isSettled(holdings, partitions)
      ? [...holdings].map(([id, ks]) => `${id}:${ks.join(',')}`).join(';')
      : '';
    if (key === '' || key !== stableKey) {
      stableKey = key;
      stableSince = now;
    } else if (now - stableSince >= STABLE_MS) {
      return stableSince;
    }
    if (now - started > timeoutMs) {
      const held = [...holdings].map(([id, ks]) => `${id}: [${ks.join(',')}]`).join('; ');
      throw new Error(
        `the ${partitions} partitions did not settle over ${hubs.length} hubs in ${timeoutMs} ms: ${held}`,
      );
    }
    await sleep(POLL_MS);
  }
}

/** `perPartition` fresh channel ids for each of `partitions` partitions: `ids[k]` are partition `k`'s. */
export function channelIdsByPartition(partitions: number, perPartition: number): string[][] {
  const ids: string[][] = Array.from({ length: partitions }, () => []);
  let missing = partitions * perPartition;
  while (missing > 0) {
    const id = newId();
    const mine = ids[partitionOf(id, partitions)];
    if (mine === undefined || mine.length >= perPartition) continue;
    mine.push(id);
    missing -= 1;
  }
  return ids;
}
