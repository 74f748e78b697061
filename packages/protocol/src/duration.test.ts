import { describe, expect, it } from 'vitest';
import { DurationSchema, parseDuration } from '@ag2net/protocol';

describe('parseDuration', () => {
  it.each([
    ['30s', 30],
    ['15m', 900],
    ['2h', 7200],
    ['4h', 14400],
    ['1d', 86400],
    ['0s', 0],
    ['60', 60],
    ['', 0],
  ])('parses %j as %i seconds', (text, seconds) => {
    expect(parseDuration(text)).toBe(seconds);
  });

  it('passes whole numbers of seconds through', () => {
    expect(parseDuration(45)).toBe(45);
    expect(parseDuration(0)).toBe(0);
  });

  it.each(['abc', '5x', '10y', 'fast'])('throws a RangeError for %j', (text) => {
    expect(() => parseDuration(text)).toThrow(RangeError);
    expect(() => parseDuration(text)).toThrow(`invalid duration '${text}': expected seconds or <n>s, <n>m, <n>h, <n>d`);
  });

  it('throws a RangeError for a fractional number of seconds', () => {
    expect(() => parseDuration(1.5)).toThrow(new RangeError('invalid duration 1.5: not a whole number of seconds'));
  });
});

describe('DurationSchema', () => {
  it.each(['2h', '15m', '', '60', 30, 0])('accepts %j and returns it unchanged', (value) => {
    expect(DurationSchema.parse(value)).toBe(value);
  });

  it("rejects a string parseDuration rejects, with parseDuration's message", () => {
    const result = DurationSchema.safeParse('5x');
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.message)).toEqual([
      "invalid duration '5x': expected seconds or <n>s, <n>m, <n>h, <n>d",
    ]);
  });

  it.each([1.5, null, true, ['2h']])('rejects %j', (value) => {
    expect(DurationSchema.safeParse(value).success).toBe(false);
  });
});

describe('DurationSchema bounds', () => {
  it.each([31_536_000, '365d', '8760h'])('accepts %j, 365 days', (value) => {
    expect(DurationSchema.safeParse(value).success).toBe(true);
  });

  it.each([31_536_001, '366d', '99999999999999999999d', -31_536_001])('refuses %j with a short message', (value) => {
    const parsed = DurationSchema.safeParse(value);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toMatch(
      /^invalid duration .{1,60}: at most 31536000 seconds \(365 days\)$/,
    );
  });

  it('refuses a huge string with a short message', () => {
    const parsed = DurationSchema.safeParse('9'.repeat(100_000));
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues).length).toBeLessThan(400);
  });
});
