import { describe, expect, it } from 'vitest';
import { parseTime, relativeTime, shortDuration } from './time.js';

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
