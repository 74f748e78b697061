import { describe, expect, it } from 'vitest';
import { traceAnchorOf } from './trace-id.js';

describe('traceAnchorOf', () => {
  it('anchors a W3C trace id under its last 16 hex digits', () => {
    expect(traceAnchorOf('4bf92f3577b34da6a3ce929d0e0e4736')).toEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: 'a3ce929d0e0e4736',
    });
  });

  it('reads a UUID and upper case, and uses the first half when the last is zero', () => {
    expect(traceAnchorOf('4BF92F35-77B3-4DA6-0000-000000000000')).toEqual({
      traceId: '4bf92f3577b34da60000000000000000',
      spanId: '4bf92f3577b34da6',
    });
  });

  it('has no anchor for a missing, all-zero or foreign trace id', () => {
    expect(traceAnchorOf(null)).toBeNull();
    expect(traceAnchorOf(undefined)).toBeNull();
    expect(traceAnchorOf('0'.repeat(32))).toBeNull();
    expect(traceAnchorOf('conversation-42')).toBeNull();
    expect(traceAnchorOf('4bf92f3577b34da6a3ce929d0e0e473')).toBeNull();
  });
});
