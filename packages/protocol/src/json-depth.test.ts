import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonDepthExceeds } from '@ag2net/protocol/internal';

/** The definition, one character at a time: what the scan that jumps over string literals must agree with. */
function exceedsByCharacter(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '[' || c === '{') {
      depth++;
      if (depth > maxDepth) return true;
    } else if (c === ']' || c === '}') depth--;
  }
  return false;
}

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

  it('skips string literals ending in runs of backslashes, and one never closed', () => {
    expect(jsonDepthExceeds('["\\\\", [[1]]]', 2)).toBe(true);
    expect(jsonDepthExceeds('["\\\\\\"[[[[", 1]', 2)).toBe(false);
    expect(jsonDepthExceeds('["[[[[', 2)).toBe(false);
  });

  it('agrees with the character-by-character definition on any text, JSON or not', () => {
    const pieces = fc.constantFrom('[', ']', '{', '}', '"', '\\', 'a', ',', ':', ' ', '1');
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 80 }), fc.integer({ min: 0, max: 6 }), (parts, maxDepth) => {
        const text = parts.join('');
        expect(jsonDepthExceeds(text, maxDepth)).toBe(exceedsByCharacter(text, maxDepth));
      }),
      { numRuns: 2_000 },
    );
    fc.assert(
      fc.property(fc.json({ maxDepth: 8 }), fc.integer({ min: 0, max: 10 }), (text, maxDepth) => {
        expect(jsonDepthExceeds(text, maxDepth)).toBe(exceedsByCharacter(text, maxDepth));
      }),
      { numRuns: 500 },
    );
  });
});
