import { describe, expect, it } from 'vitest';
import { durationLabel, parseTime, pastTime, relativeTime, remainingLabel, shortDuration, ttlLabel } from './time.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');

describe('relativeTime', () => {
  it('says past and future times in the largest whole unit', () => {
    expect(relativeTime(NOW, NOW)).toBe('just now');
    expect(relativeTime(NOW - 4_000, NOW)).toBe('just now');
    expect(relativeTime(NOW - 42_000, NOW)).toBe('42 s ago');
    expect(relativeTime(NOW - 3 * 60_000 - 20_000, NOW)).toBe('3 min ago');
    expect(relativeTime(NOW - 2 * 3_600_000, NOW)).toBe('2 h ago');
    expect(relativeTime(NOW - 3 * 86_400_000, NOW)).toBe('3 d ago');
    expect(relativeTime(NOW + 10 * 60_000, NOW)).toBe('in 10 min');
    expect(relativeTime(NOW + 30_000, NOW)).toBe('in 30 s');
  });
});

describe('shortDuration', () => {
  it('floors to one unit', () => {
    expect(shortDuration(0)).toBe('0 s');
    expect(shortDuration(59.9)).toBe('59 s');
    expect(shortDuration(61)).toBe('1 min');
    expect(shortDuration(7200)).toBe('2 h');
    expect(shortDuration(90_000)).toBe('1 d');
    expect(shortDuration(-3)).toBe('0 s');
  });
});

describe('parseTime', () => {
  it('reads ISO text; empty, null and garbage are null', () => {
    expect(parseTime('2026-01-01T12:00:00Z')).toBe(NOW);
    expect(parseTime('')).toBeNull();
    expect(parseTime(null)).toBeNull();
    expect(parseTime('yesterday-ish')).toBeNull();
  });
});

describe('pastTime', () => {
  it('reads a timestamp a little ahead (clock skew) as just now', () => {
    expect(pastTime(NOW + 3 * 60_000, NOW)).toBe('just now');
    expect(pastTime(NOW + 9 * 60_000 + 59_000, NOW)).toBe('just now');
    expect(pastTime(NOW - 3 * 60_000, NOW)).toBe('3 min ago');
  });
  it('keeps a timestamp far in the future as such', () => {
    expect(pastTime(NOW + 10 * 60_000, NOW)).toBe('in 10 min');
    expect(pastTime(NOW + 3_600_000, NOW)).toBe('in 1 h');
  });
});

describe('ttlLabel', () => {
  const created = new Date(NOW - 60_000).toISOString();
  const channel = (state: string, expiresAt: number | null) => ({
    state,
    expires_at: expiresAt === null ? null : new Date(expiresAt).toISOString(),
    created_at: created,
  });
  it('shows no TTL for an ended channel', () => {
    expect(ttlLabel(channel('closed', NOW + 3_600_000), NOW)).toBe('—');
    expect(ttlLabel(channel('expired', NOW - 60_000), NOW)).toBe('—');
    expect(ttlLabel(channel('closing', NOW + 3_600_000), NOW)).toBe('—');
  });
  it('shows a live channel TTL in hours and minutes, even a short one', () => {
    expect(ttlLabel(channel('active', NOW + 3_600_000), NOW)).toBe('in 1 h');
    expect(ttlLabel(channel('active', NOW + 7_199_400), NOW)).toBe('in 1 h 59 min');
    expect(ttlLabel(channel('active', NOW + 3 * 60_000), NOW)).toBe('in 3 min');
    expect(ttlLabel(channel('active', NOW + 90_000), NOW)).toBe('in 1 min 30 s');
    expect(ttlLabel(channel('pending', null), NOW)).toBe('none');
    expect(ttlLabel(channel('active', NOW - 1000), NOW)).toBe('expired');
  });
  it('never shows more than the whole TTL when the hub clock runs ahead of the browser', () => {
    const ahead = { state: 'active', created_at: new Date(NOW + 2000).toISOString() };
    const expires = new Date(NOW + 2000 + 7_200_000).toISOString();
    expect(ttlLabel({ ...ahead, expires_at: expires }, NOW)).toBe('in 2 h');
    expect(ttlLabel({ ...ahead, expires_at: expires }, NOW + 3000)).toBe('in 1 h 59 min');
  });
});

describe('remainingLabel', () => {
  it('says the two largest units, leaving out a zero second one', () => {
    expect(remainingLabel(0)).toBe('0 s');
    expect(remainingLabel(59.9)).toBe('59 s');
    expect(remainingLabel(125)).toBe('2 min 5 s');
    expect(remainingLabel(3600)).toBe('1 h');
    expect(remainingLabel(3 * 86_400 + 7200 + 59)).toBe('3 d 2 h');
  });
});

describe('durationLabel', () => {
  it('says milliseconds, tenths of seconds up to 10 s, then whole units', () => {
    expect(durationLabel(0)).toBe('0 ms');
    expect(durationLabel(849.6)).toBe('850 ms');
    expect(durationLabel(4_280)).toBe('4.2 s');
    expect(durationLabel(12_900)).toBe('12 s');
    expect(durationLabel(125_000)).toBe('2 min 5 s');
    expect(durationLabel(-5)).toBe('0 ms');
  });
});
