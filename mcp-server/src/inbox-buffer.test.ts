import { EnvelopeSchema, type Envelope } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { InboxBuffer } from './inbox-buffer.js';

function envelope(id: string, channelId = 'c1'): Envelope {
  return EnvelopeSchema.parse({
    envelope_id: id,
    channel_id: channelId,
    sender_id: 'alice',
    event_type: 'ag2.msg.text',
    event_data: { text: id },
  });
}

const ids = (read: { envelopes: readonly Envelope[] }): string[] => read.envelopes.map((e) => e.envelope_id);

describe('InboxBuffer', () => {
  it('returns the oldest unread first, at most the limit, and what it returned is read', () => {
    const inbox = new InboxBuffer(10);
    for (const id of ['e1', 'e2', 'e3']) inbox.push(envelope(id));
    const first = inbox.take({ limit: 2 });
    expect([ids(first), first.remaining, first.dropped]).toEqual([['e1', 'e2'], 1, 0]);
    expect(ids(inbox.take({ limit: 5 }))).toEqual(['e3']);
    expect(ids(inbox.take({ limit: 5 }))).toEqual([]);
  });

  it('keeps the newest when full and counts the dropped ones once', () => {
    const inbox = new InboxBuffer(2);
    for (const id of ['e1', 'e2', 'e3', 'e4']) inbox.push(envelope(id));
    const read = inbox.take({ limit: 10 });
    expect([ids(read), read.dropped]).toEqual([['e3', 'e4'], 2]);
    expect(inbox.take({ limit: 10 }).dropped).toBe(0);
  });

  it('reads one channel and leaves the others unread, in order', () => {
    const inbox = new InboxBuffer();
    inbox.push(envelope('a1', 'a'));
    inbox.push(envelope('b1', 'b'));
    inbox.push(envelope('a2', 'a'));
    expect(ids(inbox.take({ limit: 10, channelId: 'a' }))).toEqual(['a1', 'a2']);
    expect(ids(inbox.take({ limit: 10 }))).toEqual(['b1']);
  });

  it('does not keep a redelivered envelope again, unread or read lately', () => {
    const inbox = new InboxBuffer(2);
    inbox.push(envelope('e1'));
    inbox.push(envelope('e1'));
    expect(inbox.size).toBe(1);
    expect(ids(inbox.take({ limit: 5 }))).toEqual(['e1']);
    inbox.push(envelope('e1'));
    expect(inbox.size).toBe(0);
  });

  it('refuses a capacity below one', () => {
    expect(() => new InboxBuffer(0)).toThrow(RangeError);
  });
});
