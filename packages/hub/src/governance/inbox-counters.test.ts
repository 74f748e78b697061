import { ChannelMetadataSchema, EV_CHANNEL_INVITE_ACK, EV_TEXT, createEnvelope } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { InboxCounters, type CountedChannel } from './inbox-counters.js';

const channel: CountedChannel = {
  metadata: ChannelMetadataSchema.parse({
    channel_id: 'c1',
    manifest: { type: 'conversation' },
    creator_id: 'alice',
    participants: [
      { agent_id: 'alice', role: 'initiator', order: 0 },
      { agent_id: 'bob', role: 'respondent', order: 1 },
    ],
    state: 'active',
    created_at: '2026-01-01T00:00:00.000Z',
  }),
  inboxAdmitted: new Map(),
};

/** A cap of 10 messages with the default high-water mark, 8: the marks `inboxPending` passes for such a rule. */
const MARKS = { refreshAt: 8, highWater: 8 };
const LIMITS = { maxPending: 10, highWater: null };

/** Admits `n` texts from alice to bob. */
function admit(counters: InboxCounters, n: number): void {
  for (let i = 0; i < n; i += 1) {
    const envelope = createEnvelope({
      channel_id: 'c1',
      sender_id: 'alice',
      event_type: EV_TEXT,
      event_data: { text: `#${i}` },
    });
    counters.count(envelope, channel, () => LIMITS);
  }
}

describe('InboxCounters pressure', () => {
  it('never reports a recipient that acks everything, however many envelopes it receives', async () => {
    const counters = new InboxCounters();
    const checks: boolean[] = [];
    let asked = 0;
    for (let i = 0; i < 100; i += 1) {
      admit(counters, 1);
      const { pressureStarted } = await counters.pending('bob', MARKS, () => {
        asked += 1;
        return Promise.resolve(0);
      });
      checks.push(pressureStarted);
    }
    expect(checks.filter(Boolean)).toEqual([]);
    // The estimate still reaches the mark every 8 envelopes (acks are unseen between refreshes): the consumer is asked.
    expect(asked).toBe(12);
  });

  it('reports a recipient that stops consuming once per episode, from its consumer count', async () => {
    const counters = new InboxCounters();
    let unread = 0;
    const depth = (): Promise<number> => Promise.resolve(unread);
    const check = async (): Promise<[number, boolean]> => {
      const { pending, pressureStarted } = await counters.pending('bob', MARKS, depth);
      return [pending, pressureStarted];
    };
    const seen: [number, boolean][] = [];
    for (let i = 0; i < 10; i += 1) {
      admit(counters, 1);
      unread += 1;
      seen.push(await check());
    }
    expect(seen).toEqual([
      [1, false],
      [2, false],
      [3, false],
      [4, false],
      [5, false],
      [6, false],
      [7, false],
      [8, true],
      [9, false],
      [10, false],
    ]);
    // It reads everything: the episode ends at the next check, and a new one starts when it stops again.
    unread = 0;
    expect(await check()).toEqual([0, false]);
    admit(counters, 8);
    unread = 8;
    expect(await check()).toEqual([8, true]);
  });

  it('ends an episode when the estimate, which errs high, falls under the mark without asking', async () => {
    const counters = new InboxCounters();
    admit(counters, 8);
    expect(await counters.pending('bob', MARKS, () => Promise.resolve(8))).toEqual({
      pending: 8,
      pressureStarted: true,
    });
    // bob answers an invite: read, so the estimate falls to 7 and the check needs no consumer count.
    const ack = createEnvelope({
      channel_id: 'c1',
      sender_id: 'bob',
      event_type: EV_CHANNEL_INVITE_ACK,
      event_data: {},
    });
    counters.count(ack, channel, () => LIMITS);
    const unasked = await counters.pending('bob', MARKS, () => Promise.reject(new Error('not asked')));
    expect(unasked).toEqual({ pending: 7, pressureStarted: false });
    admit(counters, 1);
    expect(await counters.pending('bob', MARKS, () => Promise.resolve(8))).toEqual({
      pending: 8,
      pressureStarted: true,
    });
  });

  it('reports nothing when the consumer cannot be asked, and never for an agent without a cap', async () => {
    const counters = new InboxCounters();
    admit(counters, 9);
    const refused = await counters.pending('bob', MARKS, () => Promise.reject(new Error('timeout')));
    expect(refused).toEqual({ pending: 9, pressureStarted: false });
    const uncapped = await counters.pending('bob', { refreshAt: Infinity, highWater: Infinity }, () =>
      Promise.resolve(9),
    );
    expect(uncapped).toEqual({ pending: 9, pressureStarted: false });
  });
});

describe('InboxCounters of one partition among several', () => {
  it('takes an inbox the consumer reports fuller than its own count as that full: the other partitions filled it', async () => {
    const shared = new InboxCounters();
    const own = new InboxCounters();
    admit(shared, 2);
    admit(own, 2);
    // Two of this partition's own, eight more from other partitions' channels; the refresh is asked at once.
    const depth = (): Promise<number> => Promise.resolve(10);
    const marks = { refreshAt: 1, highWater: 8 };
    expect(await shared.pending('bob', { ...marks, shared: true }, depth)).toEqual({
      pending: 10,
      pressureStarted: true,
    });
    expect(await own.pending('bob', marks, depth)).toEqual({ pending: 2, pressureStarted: false });
  });
});
