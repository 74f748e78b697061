import { describe, expect, it } from 'vitest';
import { IdSchema, createIdFactory, isId, newId } from '@ag2net/protocol';
import { parseHubUrn } from './ids.js';

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

describe('createIdFactory', () => {
  it('mints 1000 strictly increasing, unique ids within one fixed millisecond', () => {
    const next = createIdFactory();
    const ids = Array.from({ length: 1000 }, () => next(1_778_328_000_000));
    expect(new Set(ids).size).toBe(1000);
    for (let i = 1; i < ids.length; i += 1) expect((ids[i - 1] ?? '') < (ids[i] ?? '')).toBe(true);
    expect(new Set(ids.map((id) => id.slice(0, 10))).size).toBe(1);
  });

  it('keeps ids increasing when the clock steps backwards', () => {
    const next = createIdFactory();
    const later = next(1_778_328_000_500);
    const earlier = next(1_778_328_000_000);
    expect(earlier > later).toBe(true);
    expect(earlier.slice(0, 10)).toBe(later.slice(0, 10));
  });

  it('orders ids of later milliseconds after earlier ones', () => {
    const next = createIdFactory();
    expect(next(1_000) < next(2_000)).toBe(true);
  });

  it('mints subject-token-safe ids: 26 Crockford base32 characters that IdSchema accepts', () => {
    const next = createIdFactory();
    for (const id of [next(), next(0), next(1_778_328_000_000), newId()]) {
      expect(id).toMatch(ULID);
      expect(id).not.toMatch(/[.*>\s]/);
      expect(IdSchema.parse(id)).toBe(id);
    }
  });

  it('mints increasing ids from the shared newId factory', () => {
    const a = newId();
    const b = newId();
    expect(a < b).toBe(true);
  });
});

describe('IdSchema', () => {
  it.each([
    ['a hand-picked id', 'c1'],
    ['an AG2 id of 32 hex digits', '18a3f2c4d5e6b7a8c0ffee00c0ffee01'],
    ['a ULID', '01JTWQ5X3Z8K2M4N6P8R0T2V4W'],
    ['underscores and dashes', 'my_agent-2'],
    ['128 characters', 'a'.repeat(128)],
  ])('accepts %s', (_label, id) => {
    expect(IdSchema.safeParse(id).success).toBe(true);
    expect(isId(id)).toBe(true);
  });

  it.each([
    ['a.b', 'id may hold only letters, digits, "_" and "-"'],
    ['a*', 'id may hold only letters, digits, "_" and "-"'],
    ['a>', 'id may hold only letters, digits, "_" and "-"'],
    ['a b', 'id may hold only letters, digits, "_" and "-"'],
    ['café', 'id may hold only letters, digits, "_" and "-"'],
    ['', 'id must not be empty'],
    ['a'.repeat(129), 'id must be at most 128 characters'],
  ])('rejects %j with "%s"', (id, message) => {
    const result = IdSchema.safeParse(id);
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.message)).toContain(message);
    expect(isId(id)).toBe(false);
  });
});

describe('parseHubUrn', () => {
  it('splits hub://h/a into hub and agent', () => {
    expect(parseHubUrn('hub://h/a')).toEqual(['h', 'a']);
  });

  it('keeps slashes after the first one in the agent part', () => {
    expect(parseHubUrn('hub://other-hub/team/bob')).toEqual(['other-hub', 'team/bob']);
  });

  it.each(['hub://only', 'hub:///a', 'hub://h/', '', 'bob', 'http://h/a', 'HUB://h/a'])(
    'treats %j as a local id',
    (value) => {
      expect(parseHubUrn(value)).toEqual([null, value]);
    },
  );
});
