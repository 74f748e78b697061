import { describe, expect, it } from 'vitest';
import { isoAt } from './clock.js';

describe('isoAt', () => {
  it('gives the ISO timestamp of each millisecond, the same one again and the one before it', () => {
    expect(isoAt(0)).toBe('1970-01-01T00:00:00.000Z');
    expect(isoAt(1_764_300_000_123)).toBe('2025-11-28T03:20:00.123Z');
    expect(isoAt(1_764_300_000_123)).toBe('2025-11-28T03:20:00.123Z');
    expect(isoAt(1_764_300_000_122)).toBe('2025-11-28T03:20:00.122Z');
    expect(isoAt(0)).toBe('1970-01-01T00:00:00.000Z');
  });
});
