import { describe, expect, it } from 'vitest';
import { repr } from '@ag2net/protocol/internal';

describe('repr', () => {
  it.each([
    ['a plain string in single quotes', 'c1', "'c1'"],
    ['a string with a single quote in double quotes', "it's", '"it\'s"'],
    ['a string with both quotes in single quotes, escaping the single one', 'it\'s "x"', "'it\\'s \"x\"'"],
    [
      'backslash, newline, tab and carriage return escaped',
      'back\\slash\nnew\ttab\r',
      "'back\\\\slash\\nnew\\ttab\\r'",
    ],
    ['control characters as \\x escapes', '\x00\x1b\x7f', "'\\x00\\x1b\\x7f'"],
    ['printable non-ASCII kept, non-printable escaped', '😀é\u2028\u00a0 \u200b', "'😀é\\u2028\\xa0 \\u200b'"],
    ['the empty string', '', "''"],
  ])('writes %s', (_label, value, expected) => {
    expect(repr(value)).toBe(expected);
  });

  it('writes null and undefined as None, booleans as True and False', () => {
    expect(repr(null)).toBe('None');
    expect(repr(undefined)).toBe('None');
    expect(repr(true)).toBe('True');
    expect(repr(false)).toBe('False');
  });

  it('writes lists and dicts with Python separators', () => {
    expect(repr(['round_robin', 1, null, true, false])).toBe("['round_robin', 1, None, True, False]");
    expect(repr({ a: 1, b: [true] })).toBe("{'a': 1, 'b': [True]}");
    expect(repr([])).toBe('[]');
    expect(repr({})).toBe('{}');
  });

  it('writes numbers as Python floats and ints do', () => {
    expect(repr(3)).toBe('3');
    expect(repr(0.5)).toBe('0.5');
    expect(repr(1e-7)).toBe('1e-07');
    expect(repr(0.00001)).toBe('1e-05');
    expect(repr(0.0001)).toBe('0.0001');
    expect(repr(Number.NaN)).toBe('nan');
    expect(repr(-Infinity)).toBe('-inf');
  });
});

describe('repr on hostile input', () => {
  it('cuts a 250,000-character string to 200 characters, an ellipsis and the original length', () => {
    const out = repr('\x7f'.repeat(250_000));
    expect(out).toBe(`'${'\\x7f'.repeat(50)}`.slice(0, 200) + '… (250000 chars)');
  });

  it('cuts a long list and names its length', () => {
    expect(repr(Array.from({ length: 100_000 }, () => 1))).toBe(
      `[${'1, '.repeat(67)}`.slice(0, 200) + '… (100000 items)',
    );
  });

  it('writes nesting past 16 levels as [...] and survives 100,000 levels', () => {
    let deep: unknown = [];
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(repr(deep)).toBe(`${'['.repeat(16)}[...]${']'.repeat(16)}`);
  });

  it('keeps a __proto__ key of parsed JSON as a key', () => {
    expect(repr(JSON.parse('{"__proto__": 1, "constructor": 2}'))).toBe("{'__proto__': 1, 'constructor': 2}");
  });

  it('takes a smaller budget', () => {
    expect(repr('abcdefgh', { maxChars: 4 })).toBe("'abc… (8 chars)");
  });
});
