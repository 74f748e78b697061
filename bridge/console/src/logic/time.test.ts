import { describe, expect, it } from 'vitest';
import { parseTime, pastTime, relativeTime, shortDuration, ttlLabel } from './time.js';

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
  it('shows no TTL for an ended channel', () => {
    expect(ttlLabel('closed', NOW + 3_600_000, NOW)).toBe('—');
    expect(ttlLabel('expired', NOW - 60_000, NOW)).toBe('—');
    expect(ttlLabel('closing', NOW + 3_600_000, NOW)).toBe('—');
  });
  it('shows a live channel TTL, even a short one', () => {
    expect(ttlLabel('active', NOW + 3_600_000, NOW)).toBe('in 1 h');
    expect(ttlLabel('active', NOW + 3 * 60_000, NOW)).toBe('in 3 min');
    expect(ttlLabel('pending', null, NOW)).toBe('none');
    expect(ttlLabel('active', NOW - 1000, NOW)).toBe('expired');
  });
});
