import { EnvelopeSchema } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { envelopeText, renderTranscript, showEnvelope } from './transcript.js';

const at = '2026-01-01T00:00:00.000Z';

describe('transcript rendering', () => {
  it("shows a message's text, a packet's body and an event's reason", () => {
    const text = EnvelopeSchema.parse({
      channel_id: 'c1',
      sender_id: 'a1',
      event_type: 'ag2.msg.text',
      event_data: { text: 'hi' },
    });
    const packet = EnvelopeSchema.parse({
      channel_id: 'c1',
      sender_id: 'a1',
      event_type: 'ag2.packet',
      event_data: { body: 'result' },
    });
    const closed = EnvelopeSchema.parse({
      channel_id: 'c1',
      sender_id: 'a1',
      event_type: 'ag2.channel.closed',
      event_data: { reason: 'done' },
    });
    expect([envelopeText(text), envelopeText(packet), envelopeText(closed)]).toEqual([
      'hi',
      'result',
      '(ag2.channel.closed: done)',
    ]);
  });

  it('cuts long texts and renders lines with sender names', () => {
    const long = EnvelopeSchema.parse({
      envelope_id: 'e1',
      channel_id: 'c1',
      sender_id: 'a1',
      event_type: 'ag2.msg.text',
      event_data: { text: 'x'.repeat(50) },
      created_at: at,
    });
    expect(envelopeText(long, 10)).toBe(`${'x'.repeat(9)}…`);
    const shown = showEnvelope(long, (id) => (id === 'a1' ? 'alice' : id));
    expect(renderTranscript([{ ...shown, text: 'hello' }])).toBe(`[${at}] alice: hello`);
  });
});
