import { EV_CHANNEL_OPENED, EV_TEXT } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { channelFor, event, expectProtocolError, foldAll, text } from '../test/helpers.js';
import { ConversationAdapter } from './conversation.js';

const adapter = new ConversationAdapter();
const meta = channelFor(adapter, { creator: 'alice', others: ['bob'] });

describe('ConversationAdapter', () => {
  it('is conversation@v1 with a max_silence audit expectation and a 10-envelope windowed view', () => {
    expect(adapter.manifest.type).toBe('conversation');
    expect(adapter.manifest.version).toBe(1);
    expect(adapter.manifest.participants).toEqual({ min: 2, max: 2, roles: ['initiator', 'respondent'] });
    expect(adapter.manifest.default_view_policy).toBe('windowed_summary');
    expect(adapter.manifest.expectations).toEqual([
      { name: 'max_silence', on_violation: 'audit', params: { seconds: 3600 }, applies_to: null },
    ]);
    expect(adapter.defaultViewPolicy()).toEqual({ name: 'windowed_summary', recentN: 10 });
  });

  it('requires an initiator, a respondent and exactly two participants', () => {
    const three = channelFor(adapter, { creator: 'alice', others: ['bob', 'carol'] });
    expectProtocolError(() => adapter.validateCreate(three), 'conversation requires exactly one respondent');
    expect(() => adapter.validateCreate(meta)).not.toThrow();
  });

  it('rejects text from a non-participant', () => {
    expectProtocolError(
      () => adapter.validateSend(meta, text('eve', 'hi', 'x'), adapter.initialState()),
      "conversation channel 'c1' only accepts sends from participants, got 'eve'",
    );
  });

  it('lets either participant speak in any order, any number of times', () => {
    const s = foldAll(adapter, meta, [text('alice', '1', 'e1'), text('alice', '2', 'e2')]);
    expect(() => adapter.validateSend(meta, text('alice', '3', 'e3'), s)).not.toThrow();
    expect(() => adapter.validateSend(meta, text('bob', '3', 'e3'), s)).not.toThrow();
  });

  it('counts turns and records the last speaker and envelope', () => {
    const s = foldAll(adapter, meta, [text('bob', 'a', 'e1'), text('bob', 'b', 'e2'), text('alice', 'c', 'e3')]);
    expect(s).toEqual({ turn_count: 3, last_speaker_id: 'alice', last_envelope_id: 'e3' });
  });

  it('leaves the state unchanged for protocol and custom events', () => {
    const s = foldAll(adapter, meta, [text('alice', 'a', 'e1')]);
    expect(adapter.fold(event('alice', EV_CHANNEL_OPENED, 'o'), s)).toBe(s);
    expect(adapter.fold(event('alice', 'acme.custom', 'x'), s)).toEqual(s);
  });

  it('never closes by itself and never expects anyone', () => {
    const s = foldAll(adapter, meta, [text('alice', 'a', 'e1')]);
    expect(adapter.onAccepted()).toEqual({ nextState: null, autoCloseReason: '' });
    expect(adapter.expectedNext(meta, s)).toBeNull();
  });

  it('offers say to both participants at any time', () => {
    expect(adapter.toolsFor().map((t) => t.name)).toEqual(['say']);
  });

  it('builds a text envelope with audience and causation', () => {
    const env = new ConversationAdapter().buildTextEnvelope('c1', 'a1', {
      text: 'hello',
      audience: ['a2'],
      causationId: 'e9',
    });
    expect(env).toEqual({
      channel_id: 'c1',
      sender_id: 'a1',
      audience: ['a2'],
      event_type: EV_TEXT,
      event_data: { text: 'hello' },
      envelope_id: '',
      task_id: null,
      causation_id: 'e9',
      trace_id: null,
      priority: 'normal',
      depth: 0,
      idempotency_key: null,
      created_at: '',
      ttl_seconds: null,
    });
  });
});
