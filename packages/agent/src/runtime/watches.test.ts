import { EV_CHANNEL_CLOSED, createEnvelope } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { text } from '../../test/fixtures.js';
import { ChannelWatches } from './watches.js';

const inOther = createEnvelope({ channel_id: 'c2', sender_id: 'bob', event_type: 'x.custom' });

describe('ChannelWatches', () => {
  it("takes every envelope of a watched channel, keeps the matching ones in order and leaves other channels' alone", async () => {
    const waiters = new ChannelWatches();
    const watch = waiters.watch('c1', (e) => e.sender_id === 'bob');
    const [first, skipped, second] = [text('bob', 'one'), text('alice', 'noise'), text('bob', 'two')];
    expect([first, skipped, second, inOther].map((e) => waiters.offer(e))).toEqual([true, true, true, false]);
    expect(await watch.next()).toBe(first);
    expect(await watch.next()).toBe(second);
  });

  it('wakes a waiting next() when a match arrives', async () => {
    const waiters = new ChannelWatches();
    const watch = waiters.watch('c1', (e) => e.event_type === EV_CHANNEL_CLOSED);
    const pending = watch.next();
    const closed = createEnvelope({ channel_id: 'c1', sender_id: 'hub', event_type: EV_CHANNEL_CLOSED });
    waiters.offer(closed);
    expect(await pending).toBe(closed);
  });

  it('rejects next() when its signal aborts, and hands the channel back to the handler once closed', async () => {
    const waiters = new ChannelWatches();
    const watch = waiters.watch('c1', () => true);
    const controller = new AbortController();
    const pending = watch.next(controller.signal);
    controller.abort(new Error('gave up'));
    await expect(pending).rejects.toThrow('gave up');
    watch.close();
    expect(waiters.offer(text('bob', 'late'))).toBe(false);
  });
});
