import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MAX_ISSUES_MESSAGE_CHARS, formatIssues } from '@ag2net/protocol/internal';

function issuesOf(schema: z.ZodType, value: unknown): z.core.$ZodIssue[] {
  const parsed = schema.safeParse(value);
  if (parsed.success) throw new Error('expected a failure');
  return parsed.error.issues;
}

describe('formatIssues', () => {
  it('writes each issue as path: message', () => {
    const issues = issuesOf(z.strictObject({ a: z.number(), b: z.object({ c: z.string() }) }), { a: 'x', b: { c: 1 } });
    expect(formatIssues('invalid op request', issues)).toBe(
      'invalid op request: a: Invalid input: expected number, received string; b.c: Invalid input: expected string, received number',
    );
  });

  it('lists five issues and counts the rest', () => {
    const issues = issuesOf(
      z.array(z.number()),
      Array.from({ length: 10_000 }, () => 'x'),
    );
    const text = formatIssues('bad', issues);
    expect(text.endsWith('; and 9995 more')).toBe(true);
    expect(text.split('; ')).toHaveLength(6);
  });

  it('bounds huge keys in paths and the whole message', () => {
    const key = 'k'.repeat(100_000);
    const issues = issuesOf(z.strictObject({}), { [key]: 1, [`${key}.x`]: 2 });
    const text = formatIssues('bad', issues);
    expect(text.length).toBeLessThanOrEqual(MAX_ISSUES_MESSAGE_CHARS);
    expect(text.startsWith('bad: (root): Unrecognized keys: ')).toBe(true);
    expect(text.endsWith('…')).toBe(true);
  });

  it('writes a list layout with one indented issue per line', () => {
    const issues = issuesOf(z.strictObject({ a: z.number(), b: z.string() }), { a: 'x', b: 2 });
    expect(formatIssues('config.yaml is invalid', issues, { layout: 'list' })).toBe(
      'config.yaml is invalid:\n  a: Invalid input: expected number, received string\n  b: Invalid input: expected string, received number',
    );
  });

  it('names paths with describePath', () => {
    const issues = issuesOf(z.strictObject({ port: z.number() }), { port: 'x' });
    expect(formatIssues('bad', issues, { describePath: (path) => `--${String(path[0])}` })).toBe(
      'bad: --port: Invalid input: expected number, received string',
    );
  });

  it('names the root', () => {
    expect(formatIssues('bad', issuesOf(z.string(), 1))).toBe(
      'bad: (root): Invalid input: expected string, received number',
    );
  });
});
