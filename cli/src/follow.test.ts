import { EnvelopeSchema, type Envelope } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { followLog, type LogReader } from './follow.js';

/** A log of `count` envelopes; each read answers at most `page` of them from `since` on. */
function logOf(count: number, page: number): LogReader & { readonly sinces: number[]; grow(n: number): void } {
  let size = count;
  const sinces: number[] = [];
  const envelope = (sequence: number): Envelope =>
    EnvelopeSchema.parse({
      channel_id: 'c1',
      envelope_id: `e${sequence}`,
      sender_id: 'A1',
      event_type: 'ag2.msg.text',
      created_at: '2020-03-02T09:15:06.000Z',
      sequence,
    });
  return {
    sinces,
    grow: (n) => void (size += n),
    readWal: (_channelId, { since = 1 }) => {
      sinces.push(since);
      const last = Math.min(size, since + page - 1);
      return Promise.resolve(Array.from({ length: Math.max(0, last - since + 1) }, (_, i) => envelope(since + i)));
    },
  };
}

describe('followLog', () => {
  it('yields each envelope once, in order, from where it started, and what the log gains after', async () => {
    const log = logOf(5, 2);
    const stop = new AbortController();
    const seen: number[] = [];
    for await (const e of followLog(log, 'c', { since: 3, pollMs: 1, signal: stop.signal })) {
      seen.push(e.sequence ?? 0);
      if (seen.length === 3) log.grow(2);
      if (seen.length === 5) stop.abort();
    }
    expect(seen).toEqual([3, 4, 5, 6, 7]);
    expect(log.sinces.slice(0, 3)).toEqual([3, 5, 6]);
  });

  it('reads nothing once the signal aborted', async () => {
    const log = logOf(5, 10);
    const seen: Envelope[] = [];
    for await (const e of followLog(log, 'c', { since: 1, pollMs: 1, signal: AbortSignal.abort() })) seen.push(e);
    expect([seen, log.sinces]).toEqual([[], []]);
  });
});
