import { describe, expect, it } from 'vitest';
import { EnvelopeSchema, EventTypeSchema, Priority, createEnvelope } from '@ag2net/protocol';

const REQUIRED = { channel_id: 'c1', sender_id: 'alice', event_type: 'ag2.msg.text' };

describe('EnvelopeSchema', () => {
  it("fills AG2's defaults for the 14 fields, in AG2's order, without a sequence", () => {
    const env = createEnvelope(REQUIRED);
    expect(env).toStrictEqual({
      channel_id: 'c1',
      sender_id: 'alice',
      audience: null,
      event_type: 'ag2.msg.text',
      event_data: {},
      envelope_id: '',
      task_id: null,
      causation_id: null,
      trace_id: null,
      priority: 'normal',
      depth: 0,
      idempotency_key: null,
      created_at: '',
      ttl_seconds: null,
    });
    expect(Object.keys(env)).toEqual([
      'channel_id',
      'sender_id',
      'audience',
      'event_type',
      'event_data',
      'envelope_id',
      'task_id',
      'causation_id',
      'trace_id',
      'priority',
      'depth',
      'idempotency_key',
      'created_at',
      'ttl_seconds',
    ]);
  });

  it('rejects an unknown key, as AG2 Envelope(**d) does', () => {
    const result = EnvelopeSchema.safeParse({ ...REQUIRED, recipient: 'bob' });
    expect(result.success).toBe(false);
    expect(result.error?.issues).toMatchObject([{ code: 'unrecognized_keys', keys: ['recipient'] }]);
  });

  it.each(['channel_id', 'sender_id', 'event_type'])('requires %s', (key) => {
    const input: Record<string, unknown> = { ...REQUIRED };
    delete input[key];
    expect(EnvelopeSchema.safeParse(input).error?.issues.map((issue) => issue.path)).toEqual([[key]]);
  });

  it('takes sequence as an optional positive integer', () => {
    expect(createEnvelope({ ...REQUIRED, sequence: 1 }).sequence).toBe(1);
    expect(createEnvelope({ ...REQUIRED, sequence: 42 }).sequence).toBe(42);
    for (const sequence of [0, -1, 1.5]) {
      expect(EnvelopeSchema.safeParse({ ...REQUIRED, sequence }).success, String(sequence)).toBe(false);
    }
  });

  it('takes audience as null (everyone) or a list of ids', () => {
    expect(createEnvelope({ ...REQUIRED, audience: [] }).audience).toEqual([]);
    expect(createEnvelope({ ...REQUIRED, audience: ['bob', 'carol'] }).audience).toEqual(['bob', 'carol']);
    expect(EnvelopeSchema.safeParse({ ...REQUIRED, audience: ['*'] }).success).toBe(false);
  });

  it('takes priority background, normal or urgent', () => {
    expect(Object.values(Priority)).toEqual(['background', 'normal', 'urgent']);
    expect(createEnvelope({ ...REQUIRED, priority: 'urgent' }).priority).toBe('urgent');
    expect(EnvelopeSchema.safeParse({ ...REQUIRED, priority: 'high' }).success).toBe(false);
  });

  it('rejects negative depth and ttl', () => {
    expect(EnvelopeSchema.safeParse({ ...REQUIRED, depth: -1 }).success).toBe(false);
    expect(EnvelopeSchema.safeParse({ ...REQUIRED, ttl_seconds: -1 }).success).toBe(false);
  });

  it("takes created_at as '' or an ISO timestamp with an offset, including AG2's microseconds", () => {
    for (const created_at of [
      '',
      '2026-05-09T12:00:00.123456+00:00',
      '2026-05-09T12:00:00+00:00',
      '2026-05-09T12:00:00.123Z',
    ]) {
      expect(createEnvelope({ ...REQUIRED, created_at }).created_at).toBe(created_at);
    }
    for (const created_at of ['2026-05-09T12:00:00', 'yesterday', '2026-05-09']) {
      expect(EnvelopeSchema.safeParse({ ...REQUIRED, created_at }).success, created_at).toBe(false);
    }
  });

  it("takes envelope_id as '' or an id", () => {
    expect(createEnvelope({ ...REQUIRED, envelope_id: '01JTWQ5Y0A1B2C3D4E5F6G7H8J' }).envelope_id).toBe(
      '01JTWQ5Y0A1B2C3D4E5F6G7H8J',
    );
    expect(EnvelopeSchema.safeParse({ ...REQUIRED, envelope_id: 'a.b' }).success).toBe(false);
  });

  it('passes the event data of custom event types through untouched', () => {
    const event_data = { nested: { deep: [1, { x: null }] }, flag: true };
    expect(createEnvelope({ ...REQUIRED, event_type: 'acme.custom.thing', event_data }).event_data).toStrictEqual(
      event_data,
    );
  });
});

describe('EventTypeSchema', () => {
  it('rejects an empty event type and one over 256 characters', () => {
    expect(EventTypeSchema.safeParse('').error?.issues[0]?.message).toBe('event_type must not be empty');
    expect(EventTypeSchema.safeParse('x'.repeat(257)).error?.issues[0]?.message).toBe(
      'event_type must be at most 256 characters',
    );
    expect(EventTypeSchema.parse('x'.repeat(256))).toHaveLength(256);
  });
});
