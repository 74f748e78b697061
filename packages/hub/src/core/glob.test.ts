import { describe, expect, it } from 'vitest';
import { globMatch, matchesAny, onBadGlob } from './glob.js';

describe('globMatch', () => {
  it('matches fnmatch globs without a RegExp', () => {
    expect(globMatch('bot-7', 'bot-[0-9]')).toBe(true);
    expect(globMatch('bot-x', 'bot-[!x]')).toBe(false);
    expect(matchesAny('alice', ['bob', 'al*'])).toBe(true);
  });

  it('lets a malformed stored pattern match nothing, never throw, and reports it once', () => {
    const seen: [string, string][] = [];
    const stop = onBadGlob((pattern, problem) => seen.push([pattern, problem]));
    try {
      expect(globMatch('b', '[z-a]')).toBe(false);
      expect(globMatch('a', '[z-a]')).toBe(false);
      expect(matchesAny('a', ['[z-a]', 'a'])).toBe(true);
      expect(seen).toEqual([['[z-a]', "reversed range 'z-a' in a set"]]);
    } finally {
      stop();
    }
  });
});
