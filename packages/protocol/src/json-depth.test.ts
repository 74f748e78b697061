import { describe, expect, it } from 'vitest';
import { jsonDepthExceeds } from '@ag2net/protocol/internal';

describe('jsonDepthExceeds', () => {
  it('counts arrays and objects', () => {
    expect(jsonDepthExceeds('[[{"a":[1]}]]', 4)).toBe(false);
    expect(jsonDepthExceeds('[[{"a":[[1]]}]]', 4)).toBe(true);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(jsonDepthExceeds('{"a":"[[[[\\"[[[["}', 1)).toBe(false);
  });

  it('handles a million levels without recursion', () => {
    expect(jsonDepthExceeds('['.repeat(1_000_000) + ']'.repeat(1_000_000), 64)).toBe(true);
  });

  it('counts depth, not brackets: siblings do not add up', () => {
    expect(jsonDepthExceeds(`[${'[],'.repeat(1000)}[]]`, 2)).toBe(false);
  });
});
