import { describe, expect, it } from 'vitest';
import { createEnvelope, encodeAg2Envelope, encodeAg2Json, toAg2Dict } from '@ag2net/protocol';

// Every expected string below is what CPython's json.dumps(value, sort_keys=True) prints.
describe('encodeAg2Json', () => {
  it('sorts keys by code point and separates with ", " and ": "', () => {
    expect(encodeAg2Json({ b: 1, a: 2, B: 3, é: 4, _: 5 })).toBe('{"B": 3, "_": 5, "a": 2, "b": 1, "\\u00e9": 4}');
  });

  it('sorts keys outside the BMP after U+FFFF, as Python does', () => {
    expect(encodeAg2Json({ '\uffff': 1, '😀': 2, a: 0 })).toBe('{"a": 0, "\\uffff": 1, "\\ud83d\\ude00": 2}');
  });

  it('sorts nested objects and keeps array order', () => {
    expect(encodeAg2Json({ z: { y: [1, { b: null, a: true }], x: {} }, a: [] })).toBe(
      '{"a": [], "z": {"x": {}, "y": [1, {"a": true, "b": null}]}}',
    );
  });

  it('escapes non-ASCII and emoji as lowercase \\u escapes (ensure_ascii) and control characters', () => {
    expect(encodeAg2Json('\x00\x1f\x7f\b\f\n\r\t"\\/ é€😀\u2028')).toBe(
      '"\\u0000\\u001f\\u007f\\b\\f\\n\\r\\t\\"\\\\/ \\u00e9\\u20ac\\ud83d\\ude00\\u2028"',
    );
  });

  it('formats floats as Python repr does, with two-digit exponents', () => {
    expect(
      encodeAg2Json([
        1e-7,
        1e-5,
        2.5e-6,
        0.0001,
        1e21,
        1.5e300,
        123.456,
        -0.5,
        0.1 + 0.2,
        5e-324,
        -1.2345e-10,
        1e-4 * 0.99,
      ]),
    ).toBe(
      '[1e-07, 1e-05, 2.5e-06, 0.0001, 1e+21, 1.5e+300, 123.456, -0.5, 0.30000000000000004, 5e-324, -1.2345e-10, 9.900000000000001e-05]',
    );
  });

  it('writes integral numbers as integers', () => {
    expect(encodeAg2Json([0, -3, 1000000, 2 ** 53])).toBe('[0, -3, 1000000, 9007199254740992]');
  });

  it('writes NaN and infinities as Python does by default', () => {
    expect(encodeAg2Json([Number.NaN, Infinity, -Infinity])).toBe('[NaN, Infinity, -Infinity]');
  });

  it('writes null and undefined as null and leaves out object keys whose value is undefined', () => {
    expect(encodeAg2Json(null)).toBe('null');
    expect(encodeAg2Json(undefined)).toBe('null');
    expect(encodeAg2Json({ a: undefined, b: false })).toBe('{"b": false}');
  });

  it('throws a TypeError for values JSON cannot hold', () => {
    expect(() => encodeAg2Json(10n)).toThrow(new TypeError('cannot encode a bigint as JSON'));
    expect(() => encodeAg2Json({ f: () => 1 })).toThrow(TypeError);
  });
});

describe('encodeAg2Envelope', () => {
  it('writes all 14 AG2 fields of an envelope as Envelope.to_json() does', () => {
    const env = createEnvelope({
      channel_id: 'c1',
      sender_id: 'alice',
      event_type: 'ag2.msg.text',
      event_data: { text: 'hi' },
    });
    expect(encodeAg2Envelope(env)).toBe(
      '{"audience": null, "causation_id": null, "channel_id": "c1", "created_at": "", "depth": 0, "envelope_id": "", ' +
        '"event_data": {"text": "hi"}, "event_type": "ag2.msg.text", "idempotency_key": null, "priority": "normal", ' +
        '"sender_id": "alice", "task_id": null, "trace_id": null, "ttl_seconds": null}',
    );
  });

  it('leaves out sequence, which AG2 does not have', () => {
    const env = createEnvelope({ channel_id: 'c1', sender_id: 'alice', event_type: 'x', sequence: 3 });
    expect(toAg2Dict(env)).not.toHaveProperty('sequence');
    expect(Object.keys(toAg2Dict(env))).toHaveLength(14);
    expect(encodeAg2Envelope(env)).not.toContain('sequence');
  });
});
