import { describe, expect, it } from 'vitest';
import { TextDataSchema } from './event-data.js';
import { MAX_PARTS, ensureParts, partsOf, partsText } from './parts.js';

describe('parts', () => {
  it('ensureParts: a string is one text part, a part itself, a sequence one part per item, nothing no parts', () => {
    expect(ensureParts('hi')).toEqual([{ kind: 'text', text: 'hi' }]);
    expect(ensureParts({ kind: 'data', data: { n: 1 } })).toEqual([
      { kind: 'data', data: { n: 1 }, media_type: 'application/json' },
    ]);
    expect(ensureParts(['a', { kind: 'data', data: [1, 2], media_type: 'application/vnd.plan+json' }])).toEqual([
      { kind: 'text', text: 'a' },
      { kind: 'data', data: [1, 2], media_type: 'application/vnd.plan+json' },
    ]);
    expect(ensureParts(null)).toEqual([]);
    expect(ensureParts(undefined)).toEqual([]);
    expect(ensureParts([])).toEqual([]);
  });

  it('ensureParts refuses what is no part', () => {
    expect(() => ensureParts({ kind: 'image', data: 'x' } as never)).toThrow();
    expect(() => ensureParts({ kind: 'text', text: 'x', extra: 1 } as never)).toThrow();
  });

  it('partsText: text parts as they are, data parts as compact JSON, joined by blank lines', () => {
    expect(
      partsText([
        { kind: 'text', text: 'Plan:' },
        { kind: 'data', data: { steps: [1, 2] }, media_type: 'x' },
      ]),
    ).toBe('Plan:\n\n{"steps":[1,2]}');
    expect(partsText([])).toBe('');
  });

  it('partsOf: the parts of a text envelope, or its text as one part', () => {
    expect(partsOf({ text: 'hi' })).toEqual([{ kind: 'text', text: 'hi' }]);
    const parts = [{ kind: 'data' as const, data: null, media_type: 'application/json' }];
    expect(partsOf({ text: 'null', parts })).toEqual(parts);
  });

  it('a text envelope carries 1 to 64 parts of text or JSON data', () => {
    const part = { kind: 'text', text: 'x' };
    expect(TextDataSchema.safeParse({ text: 'x', parts: [part] }).success).toBe(true);
    expect(TextDataSchema.safeParse({ text: 'x', parts: [] }).success).toBe(false);
    expect(TextDataSchema.safeParse({ text: 'x', parts: Array(MAX_PARTS).fill(part) }).success).toBe(true);
    expect(TextDataSchema.safeParse({ text: 'x', parts: Array(MAX_PARTS + 1).fill(part) }).success).toBe(false);
    expect(TextDataSchema.safeParse({ text: 'x', parts: [{ kind: 'data', data: () => 1 }] }).success).toBe(false);
    expect(TextDataSchema.safeParse({ text: 'x', parts: [{ kind: 'file', uri: 'f' }] }).success).toBe(false);
  });
});
