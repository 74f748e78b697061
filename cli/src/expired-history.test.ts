import { NotFoundError } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { CliError } from './exit.js';
import { expiredHistoryError, expiredHistoryLine, historyRefusal, retentionLabel } from './expired-history.js';

const channel = {
  channel_id: 'c1',
  created_at: '2026-01-01T00:00:00.000Z',
  closed_at: '2026-01-01T00:30:00.000Z',
};

describe('the line about a channel whose history expired', () => {
  it('writes the retention as --retain-closed takes it, in its largest whole unit', () => {
    expect([3_600_000, 90 * 60_000, 30 * 86_400_000, 45_000, 26 * 3_600_000, 61_500, 0].map(retentionLabel)).toEqual([
      '1h',
      '90m',
      '30d',
      '45s',
      '26h',
      '61s',
      '0s',
    ]);
  });

  it('names the channel, when its history expired and how long it was kept after it ended', () => {
    expect(expiredHistoryLine({ ...channel, expired_at: '2026-01-01T01:30:00.000Z' })).toBe(
      'history of channel c1 expired at 2026-01-01T01:30:00.000Z (kept 1h after it ended); ' +
        'it can no longer be read or exported',
    );
    expect(expiredHistoryLine(channel)).toBeNull();
  });

  it('is a not-found failure (exit 3); the hub’s refusal of a read becomes it, any other error stays', () => {
    const err = expiredHistoryError({ ...channel, expired_at: '2026-01-02T00:30:00.000Z' });
    expect([err.exitCode, err.hint, err.message]).toEqual([
      3,
      null,
      'history of channel c1 expired at 2026-01-02T00:30:00.000Z (kept 1d after it ended); ' +
        'it can no longer be read or exported',
    ]);
    const refusal = new NotFoundError('the history of channel c1 expired at 2026-01-01T01:30:00.000Z', {
      details: { reason: 'expired', channel_id: 'c1', expired_at: '2026-01-01T01:30:00.000Z' },
    });
    const mapped = historyRefusal(refusal, channel);
    expect(mapped).toBeInstanceOf(CliError);
    expect(mapped instanceof CliError ? [mapped.message, mapped.cause] : null).toEqual([
      'history of channel c1 expired at 2026-01-01T01:30:00.000Z (kept 1h after it ended); ' +
        'it can no longer be read or exported',
      refusal,
    ]);
    const other = new NotFoundError('channel not found: c1');
    expect(historyRefusal(other, channel)).toBe(other);
  });
});
