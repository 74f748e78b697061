import { RuleSchema } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { globMatch, malformedGlobs, matchesAny } from './glob.js';

describe('globMatch', () => {
  it('matches fnmatch globs without a RegExp', () => {
    expect(globMatch('bot-7', 'bot-[0-9]')).toBe(true);
    expect(globMatch('bot-x', 'bot-[!x]')).toBe(false);
    expect(matchesAny('alice', ['bob', 'al*'])).toBe(true);
  });

  it('matches every name with `*`, the empty one and astral characters included, as `**` does', () => {
    for (const name of ['', 'a', 'bot-7', '🦊 fox', 'x'.repeat(1_000)]) {
      expect(globMatch(name, '*')).toBe(true);
      expect(globMatch(name, '**')).toBe(true);
    }
  });

  it('lets a malformed stored pattern match nothing, never throw', () => {
    expect(globMatch('b', '[z-a]')).toBe(false);
    expect(globMatch('a', '[z-a]')).toBe(false);
    expect(matchesAny('a', ['[z-a]', 'a'])).toBe(true);
  });
});

describe('malformedGlobs', () => {
  it("names each malformed pattern of a rule's access lists once, with its problem", () => {
    const rule = RuleSchema.parse({});
    const stored = {
      access: {
        ...rule.access,
        inbound_from: ['[z-a]', '*'],
        outbound_to: ['[z-a]'],
        channel_types: { initiate: ['consult*'], accept: ['[b'] },
      },
    };
    expect(malformedGlobs(stored)).toEqual([
      { pattern: '[z-a]', problem: "reversed range 'z-a' in a set" },
      { pattern: '[b', problem: "unclosed '[' at position 0 (write '[[]' for a literal '[')" },
    ]);
    expect(malformedGlobs(rule)).toEqual([]);
  });
});
