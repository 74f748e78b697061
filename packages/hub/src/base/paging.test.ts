import { InvalidRequestError } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { jsonBytes, pageOf } from './paging.js';

const items = ['a'.repeat(100), 'b'.repeat(100), 'c'.repeat(100), 'd'.repeat(100)];
const itemBytes = jsonBytes(items[0]);

describe('pageOf', () => {
  it('stops at the byte budget and hands out the offset of the next item', () => {
    const page = pageOf(items, { cursor: null, limit: 10, budgetBytes: itemBytes * 2 + 1 });
    expect(page).toEqual({ items: items.slice(0, 2), next_cursor: '2' });
    expect(pageOf(items, { cursor: '2', limit: 10, budgetBytes: itemBytes * 2 })).toEqual({
      items: items.slice(2),
      next_cursor: null,
    });
  });

  it('stops at the limit', () => {
    expect(pageOf(items, { cursor: '1', limit: 2 })).toEqual({ items: items.slice(1, 3), next_cursor: '3' });
  });

  it('always holds one item, however small the budget', () => {
    expect(pageOf(items, { cursor: null, limit: 10, budgetBytes: 1 })).toEqual({ items: [items[0]], next_cursor: '1' });
  });

  it('is empty past the end, and refuses a cursor it did not hand out', () => {
    expect(pageOf(items, { cursor: '9', limit: 10 })).toEqual({ items: [], next_cursor: null });
    expect(() => pageOf(items, { cursor: '-1', limit: 10 })).toThrow(InvalidRequestError);
    expect(() => pageOf(items, { cursor: '1e3', limit: 10 })).toThrow('cursor is not one this hub handed out');
  });
});
