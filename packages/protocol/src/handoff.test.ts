import { describe, expect, it } from 'vitest';
import { FinishSchema, HandoffSchema, finish, handoff } from '@ag2net/protocol';

describe('handoff', () => {
  it("defaults reason to ''", () => {
    expect(handoff('reviewer')).toStrictEqual({ kind: 'handoff', target: 'reviewer', reason: '' });
  });

  it('keeps a given reason', () => {
    expect(handoff('reviewer', 'draft ready')).toStrictEqual({
      kind: 'handoff',
      target: 'reviewer',
      reason: 'draft ready',
    });
  });

  it('builds what HandoffSchema parses, with the same defaults', () => {
    expect(HandoffSchema.parse(handoff('bob'))).toStrictEqual(handoff('bob'));
    expect(HandoffSchema.parse({ kind: 'handoff', target: 'bob' })).toStrictEqual(handoff('bob'));
    expect(HandoffSchema.safeParse({ kind: 'handoff', target: '' }).success).toBe(false);
  });
});

describe('finish', () => {
  it("defaults summary to '' and reason to 'finished'", () => {
    expect(finish()).toStrictEqual({ kind: 'finish', summary: '', reason: 'finished' });
  });

  it('keeps a given summary and reason', () => {
    expect(finish('Menu approved.')).toStrictEqual({ kind: 'finish', summary: 'Menu approved.', reason: 'finished' });
    expect(finish('Menu approved.', 'approved')).toStrictEqual({
      kind: 'finish',
      summary: 'Menu approved.',
      reason: 'approved',
    });
  });

  it('builds what FinishSchema parses, with the same defaults', () => {
    expect(FinishSchema.parse({ kind: 'finish' })).toStrictEqual(finish());
    expect(FinishSchema.safeParse({ kind: 'handoff' }).success).toBe(false);
  });
});
