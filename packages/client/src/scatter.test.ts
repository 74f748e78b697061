import { describe, expect, it } from 'vitest';
import { combineDeliveryLags, mergePendingTurns, partitionRange } from './scatter.js';

const turn = (channel_id: string, expected_at: string) => ({ channel_id, triggering_envelope_id: null, expected_at });

describe('joining what each partition answers', () => {
  it('lists the partitions of a deployment from 0', () => {
    expect(partitionRange(1)).toEqual([0]);
    expect(partitionRange(4)).toEqual([0, 1, 2, 3]);
  });

  it('orders pending turns by when they were expected (offsets included), then by channel id', () => {
    const merged = mergePendingTurns([
      [turn('c-9', '2025-01-01T10:00:00Z'), turn('c-2', '2025-01-01T12:00:00+01:00')],
      [],
      [turn('c-1', '2025-01-01T10:00:00Z'), turn('c-5', '2025-01-01T09:59:59.500Z')],
    ]);
    expect(merged.map((t) => t.channel_id)).toEqual(['c-5', 'c-1', 'c-9', 'c-2']);
  });

  it('sums the delivery lags, keeps the oldest age, and is null only when every partition is', () => {
    expect(
      combineDeliveryLags([
        { pending: 2, ack_pending: 1, oldest_pending_age_seconds: 4.5 },
        null,
        { pending: 0, ack_pending: 0, oldest_pending_age_seconds: null },
        { pending: 5, ack_pending: 3, oldest_pending_age_seconds: 12 },
      ]),
    ).toEqual({ pending: 7, ack_pending: 4, oldest_pending_age_seconds: 12 });
    expect(combineDeliveryLags([null, { pending: 0, ack_pending: 0, oldest_pending_age_seconds: null }])).toEqual({
      pending: 0,
      ack_pending: 0,
      oldest_pending_age_seconds: null,
    });
    expect(combineDeliveryLags([null, null])).toBeNull();
  });
});
