import { EV_TEXT, createEnvelope, type Envelope } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { ChannelLogCache, readLogUntil } from './log.js';

function text(channelId: string, sequence: number): Envelope {
  return createEnvelope({
    channel_id: channelId,
    sender_id: sequence % 2 === 0 ? 'alice' : 'bob',
    event_type: EV_TEXT,
    event_data: { text: `m${sequence}` },
    envelope_id: `e${sequence}`,
    sequence,
  });
}

/** A hub's `readWal` over logs of `length` envelopes per channel; records every range asked for. */
function fakeHub(length: number) {
  const asked: { channelId: string; since: number; until: number | undefined }[] = [];
  return {
    asked,
    readWal(channelId: string, range: { since?: number; until?: number } = {}): Promise<Envelope[]> {
      const since = range.since ?? 1;
      asked.push({ channelId, since, until: range.until });
      const last = Math.min(range.until ?? length, length);
      return Promise.resolve(
        Array.from({ length: Math.max(0, last - since + 1) }, (_, i) => text(channelId, since + i)),
      );
    },
  };
}

describe('reading a channel log turn after turn', () => {
  it('reads only what is new since the last turn, and returns the same log as a full read', async () => {
    const hub = fakeHub(50);
    const cache = new ChannelLogCache();
    const first = await readLogUntil(hub, text('c1', 10), cache);
    const second = await readLogUntil(hub, text('c1', 25), cache);
    const again = await readLogUntil(hub, text('c1', 25), cache);
    const earlier = await readLogUntil(hub, text('c1', 5), cache);
    expect(hub.asked).toEqual([
      { channelId: 'c1', since: 1, until: 9 },
      { channelId: 'c1', since: 10, until: 24 },
    ]);
    expect(first.map((e) => e.sequence)).toEqual(Array.from({ length: 9 }, (_, i) => i + 1));
    expect(second).toEqual(await readLogUntil(fakeHub(50), text('c1', 25)));
    expect(again).toEqual(second);
    expect(earlier.map((e) => e.sequence)).toEqual([1, 2, 3, 4]);
  });

  it('keeps the channels read most recently and reads a forgotten one from the start', async () => {
    const hub = fakeHub(50);
    const cache = new ChannelLogCache(2);
    await readLogUntil(hub, text('a', 5), cache);
    await readLogUntil(hub, text('b', 5), cache);
    await readLogUntil(hub, text('c', 5), cache);
    await readLogUntil(hub, text('a', 8), cache);
    expect(hub.asked.map((r) => [r.channelId, r.since])).toEqual([
      ['a', 1],
      ['b', 1],
      ['c', 1],
      ['a', 1],
    ]);
  });
});
