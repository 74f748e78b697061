import { ChannelMetadataSchema, NetworkError, NotFoundError, ProtocolError } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { historyExpiredAt, isHistoryExpired } from './history-expired.js';

const EXPIRED_AT = '2026-01-01T01:00:00.000Z';
const expiredWire = {
  code: 'not_found',
  message: `the history of channel c1 expired at ${EXPIRED_AT}`,
  details: { reason: 'expired', channel_id: 'c1', expired_at: EXPIRED_AT },
};
const metadata = ChannelMetadataSchema.parse({
  channel_id: 'c1',
  manifest: { type: 'conversation' },
  creator_id: 'alice',
  participants: [{ agent_id: 'alice', role: 'initiator', order: 0 }],
  state: 'closed',
  created_at: '2026-01-01T00:00:00.000Z',
  closed_at: '2026-01-01T00:00:00.000Z',
});

describe('a channel whose history expired', () => {
  it('is recognised in the not_found the hub answers, with its details typed', () => {
    const err: unknown = NetworkError.fromWire(expiredWire);
    expect(isHistoryExpired(err)).toBe(true);
    if (!isHistoryExpired(err)) return;
    expect([err.details.channel_id, err.details.expired_at]).toEqual(['c1', EXPIRED_AT]);
    expect(historyExpiredAt(err)).toBe(EXPIRED_AT);
  });

  it('is not any other not_found, nor another code with the same details', () => {
    const others: unknown[] = [
      new NotFoundError('channel not found: c1'),
      NetworkError.fromWire({ ...expiredWire, details: { reason: 'expired', channel_id: 'c1' } }),
      NetworkError.fromWire({ ...expiredWire, details: { ...expiredWire.details, expired_at: 'yesterday' } }),
      new ProtocolError('no', { details: expiredWire.details }),
      expiredWire,
      null,
    ];
    expect(others.map(isHistoryExpired)).toEqual([false, false, false, false, false, false]);
    expect(others.map(historyExpiredAt)).toEqual([null, null, null, null, null, null]);
  });

  it('is read from metadata with expired_at; metadata without it (an older record) has none', () => {
    expect(metadata).not.toHaveProperty('expired_at');
    expect(historyExpiredAt(metadata)).toBeNull();
    const expired = ChannelMetadataSchema.parse({ ...metadata, expired_at: EXPIRED_AT });
    expect(historyExpiredAt(expired)).toBe(EXPIRED_AT);
    expect(ChannelMetadataSchema.safeParse({ ...metadata, expired_at: 'soon' }).success).toBe(false);
  });
});
