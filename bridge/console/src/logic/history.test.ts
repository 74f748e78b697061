import { describe, expect, it } from 'vitest';
import { expiredAtOf, expiredOnLabel, keptLabel } from './history.js';

const EXPIRED_AT = '2026-01-01T01:00:00.000Z';

describe('a channel whose history expired', () => {
  it('is told by the not_found of a read whose details say expired, and by nothing else', () => {
    const details = { reason: 'expired', channel_id: 'c1', expired_at: EXPIRED_AT };
    expect(expiredAtOf({ code: 'not_found', details })).toBe(EXPIRED_AT);
    expect(
      [
        { code: 'not_found' },
        { code: 'not_found', details: { ...details, reason: 'gone' } },
        { code: 'not_found', details: { ...details, expired_at: 'yesterday' } },
        { code: 'not_found', details: { ...details, expired_at: 3 } },
        { code: 'access_denied', details },
        null,
      ].map(expiredAtOf),
    ).toEqual([null, null, null, null, null, null]);
  });

  it('says how long it was kept after the channel ended, from closed_at (created_at without one)', () => {
    const created_at = '2025-12-01T00:00:00.000Z';
    expect(keptLabel({ created_at, closed_at: '2026-01-01T00:00:00.000Z' }, EXPIRED_AT)).toBe('1 h');
    expect(keptLabel({ created_at, closed_at: '2025-12-31T23:30:00.000Z' }, EXPIRED_AT)).toBe('1 h 30 min');
    expect(keptLabel({ created_at, closed_at: null }, EXPIRED_AT)).toBe('31 d 1 h');
    expect(keptLabel({ created_at, closed_at: '2026-01-02T00:00:00.000Z' }, EXPIRED_AT)).toBeNull();
  });

  it('says when it expired in the reader’s locale, and an unreadable time as it came', () => {
    expect(expiredOnLabel(EXPIRED_AT)).toBe(
      new Date(EXPIRED_AT).toLocaleString(undefined, { dateStyle: 'long', timeStyle: 'short' }),
    );
    expect(expiredOnLabel('soon')).toBe('soon');
  });
});
