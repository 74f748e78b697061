import { describe, expect, it } from 'vitest';
import { GONE_CONFIRM_MS, GoneWatch, type Presence } from './presence.js';

/** A GoneWatch over scripted probe results and a hand-moved clock. */
function watchOf(results: Presence[]): { watch: GoneWatch; advance: (ms: number) => void; probed: string[] } {
  let now = 1_000;
  const probed: string[] = [];
  const watch = new GoneWatch(
    {
      probe: (hubId) => {
        probed.push(hubId);
        const next = results.shift();
        if (next === undefined) throw new Error('no scripted probe result left');
        return Promise.resolve(next);
      },
    },
    () => now,
  );
  return { watch, advance: (ms) => (now += ms), probed };
}

const holder = { hubId: 'first', revision: 7 };

describe('GoneWatch', () => {
  it('confirms a holder gone only after every probe for GONE_CONFIRM_MS found it gone', async () => {
    const { watch, advance, probed } = watchOf(['gone', 'gone', 'gone']);
    expect(await watch.confirmedGone(holder)).toBe(false);
    advance(GONE_CONFIRM_MS - 1);
    expect(await watch.confirmedGone(holder)).toBe(false);
    advance(1);
    expect(await watch.confirmedGone(holder)).toBe(true);
    expect(probed).toEqual(['first', 'first', 'first']);
  });

  it('starts over when a probe finds the holder connected or cannot tell', async () => {
    for (const interruption of ['connected', 'unknown'] as const) {
      const { watch, advance } = watchOf(['gone', interruption, 'gone', 'gone']);
      expect(await watch.confirmedGone(holder)).toBe(false);
      advance(GONE_CONFIRM_MS);
      expect(await watch.confirmedGone(holder)).toBe(false);
      advance(GONE_CONFIRM_MS);
      expect(await watch.confirmedGone(holder)).toBe(false); // a new first sighting
      advance(GONE_CONFIRM_MS);
      expect(await watch.confirmedGone(holder)).toBe(true);
    }
  });

  it('starts over when the holder renewed (another revision) or another hub holds the lease', async () => {
    const { watch, advance } = watchOf(['gone', 'gone', 'gone', 'gone']);
    expect(await watch.confirmedGone(holder)).toBe(false);
    advance(GONE_CONFIRM_MS);
    expect(await watch.confirmedGone({ ...holder, revision: 8 })).toBe(false);
    advance(GONE_CONFIRM_MS);
    expect(await watch.confirmedGone({ hubId: 'second', revision: 8 })).toBe(false);
    advance(GONE_CONFIRM_MS);
    expect(await watch.confirmedGone({ hubId: 'second', revision: 8 })).toBe(true);
  });

  it('judges nothing while its own connection is down, and starts over after a reconnect', async () => {
    const { watch, advance, probed } = watchOf(['gone', 'gone', 'gone']);
    expect(await watch.confirmedGone(holder)).toBe(false);
    watch.disconnected();
    advance(GONE_CONFIRM_MS);
    expect(await watch.confirmedGone(holder)).toBe(false);
    expect(probed).toHaveLength(1); // no probe while disconnected
    watch.reconnected();
    expect(await watch.confirmedGone(holder)).toBe(false); // the first sighting since the reconnect
    advance(GONE_CONFIRM_MS);
    expect(await watch.confirmedGone(holder)).toBe(true);
  });

  it('discards a probe that straddled a reconnect of its own connection', async () => {
    let now = 0;
    let release: (p: Presence) => void = () => undefined;
    const watch = new GoneWatch({ probe: () => new Promise<Presence>((resolve) => (release = resolve)) }, () => now);
    const pending = watch.confirmedGone(holder);
    watch.disconnected();
    now += 10;
    watch.reconnected();
    release('gone');
    expect(await pending).toBe(false);
  });

  it('has nobody to judge when no other hub holds the lease', async () => {
    const { watch, probed } = watchOf([]);
    expect(await watch.confirmedGone(null)).toBe(false);
    expect(probed).toEqual([]);
  });
});
