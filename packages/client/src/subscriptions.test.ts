import { EnvelopeSchema, type Envelope } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { EnvelopeTimeoutError, SubscriptionOverflowError, Subscriptions } from './subscriptions.js';

function envelope(id: string, channelId: string): Envelope {
  return EnvelopeSchema.parse({ envelope_id: id, channel_id: channelId, sender_id: 's', event_type: 'ag2.msg.text' });
}

describe('Subscriptions', () => {
  it('gives every subscription its own copy of each matching delivery, from the moment it subscribed', async () => {
    const subs = new Subscriptions();
    subs.publish(envelope('before', 'a'));
    const all = subs.subscribe();
    const onlyB = subs.subscribe({ channelId: 'b' });
    subs.publish(envelope('1', 'a'));
    subs.publish(envelope('2', 'b'));
    expect((await all.receive())?.envelope_id).toBe('1');
    expect((await all.receive())?.envelope_id).toBe('2');
    expect((await onlyB.receive())?.envelope_id).toBe('2');
  });

  it('ends an overflowing subscription with SubscriptionOverflowError after its buffered envelopes', async () => {
    const subs = new Subscriptions();
    const sub = subs.subscribe({ maxBuffered: 2 });
    for (const id of ['1', '2', '3']) subs.publish(envelope(id, 'a'));
    expect(subs.size).toBe(0);
    expect((await sub.receive())?.envelope_id).toBe('1');
    expect((await sub.receive())?.envelope_id).toBe('2');
    await expect(sub.receive()).rejects.toEqual(new SubscriptionOverflowError(2));
  });

  it('releases a subscription on break, and ends pending reads with null when the participant ends', async () => {
    const subs = new Subscriptions();
    const sub = subs.subscribe();
    subs.publish(envelope('1', 'a'));
    for await (const e of sub) {
      expect(e.envelope_id).toBe('1');
      break;
    }
    expect([subs.size, sub.closed]).toEqual([0, true]);
    const waiting = subs.subscribe().receive();
    subs.end();
    await expect(waiting).resolves.toBeNull();
    expect(subs.subscribe().closed).toBe(true);
  });

  it('times out a read with EnvelopeTimeoutError and rejects an aborted one with the reason', async () => {
    const subs = new Subscriptions();
    const sub = subs.subscribe();
    await expect(sub.receive({ timeout: 5 })).rejects.toBeInstanceOf(EnvelopeTimeoutError);
    const controller = new AbortController();
    const read = sub.receive({ signal: controller.signal });
    controller.abort(new Error('stop'));
    await expect(read).rejects.toThrow('stop');
    subs.publish(envelope('1', 'a'));
    expect((await sub.receive())?.envelope_id).toBe('1');
  });
});
