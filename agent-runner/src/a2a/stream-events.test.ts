import { describe, expect, it } from 'vitest';
import { textOf } from './stream-events.js';

describe('textOf', () => {
  it('reads text parts as they are and data parts as compact JSON, in order, leaving files out', () => {
    expect(
      textOf([
        { content: { $case: 'text', value: 'Totals:' } },
        { content: { $case: 'data', value: { a: 1, b: [true, null] } } },
        { content: { $case: 'url', value: 'https://example.com/f.pdf' } },
        { content: { $case: 'data', value: undefined } },
        { content: null },
      ]),
    ).toBe('Totals:\n\n{"a":1,"b":[true,null]}\n\nnull');
    expect(textOf([])).toBe('');
  });
});
