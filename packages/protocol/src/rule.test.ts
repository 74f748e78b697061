import { describe, expect, it } from 'vitest';
import { defaultRule } from '@ag2net/protocol/internal';
import { InboxBlockSchema, LimitsBlockSchema, RuleSchema } from '@ag2net/protocol';

const DEFAULT_RULE = {
  version: 1,
  access: {
    inbound_from: ['*'],
    outbound_to: ['*'],
    channel_types: { initiate: ['*'], accept: ['*'] },
  },
  limits: {
    max_concurrent_channels: 0,
    max_concurrent_tasks: 0,
    channel_ttl_default: '2h',
    task_ttl_default: '15m',
    rate: { per_minute: 0, burst: 0 },
    delegation_depth: 5,
    inbox: { max_pending: 1000, overflow: 'reject', high_water: null },
  },
};

describe('Rule', () => {
  it("has AG2's defaults: everyone in and out, no caps, 2h channels, 15m tasks, depth 5, inbox 1000", () => {
    expect(defaultRule()).toStrictEqual(DEFAULT_RULE);
  });

  it('parses an empty object to the default rule', () => {
    expect(RuleSchema.parse({})).toStrictEqual(DEFAULT_RULE);
  });

  it('returns a fresh object on every call, so mutating one leaves the next untouched', () => {
    defaultRule().access.inbound_from.push('mallory');
    expect(defaultRule().access.inbound_from).toEqual(['*']);
  });

  it('keeps the other defaults when one nested field is set', () => {
    const rule = RuleSchema.parse({ limits: { inbox: { max_pending: 10 } }, access: { outbound_to: ['bob'] } });
    expect(rule.limits).toStrictEqual({
      ...DEFAULT_RULE.limits,
      inbox: { max_pending: 10, overflow: 'reject', high_water: null },
    });
    expect(rule.access).toStrictEqual({ ...DEFAULT_RULE.access, outbound_to: ['bob'] });
  });

  it('accepts ttl defaults as seconds or duration strings and rejects bad units', () => {
    expect(LimitsBlockSchema.parse({ channel_ttl_default: 600, task_ttl_default: '1d' })).toMatchObject({
      channel_ttl_default: 600,
      task_ttl_default: '1d',
    });
    expect(LimitsBlockSchema.safeParse({ channel_ttl_default: '5x' }).error?.issues[0]?.message).toBe(
      "invalid duration '5x': expected seconds or <n>s, <n>m, <n>h, <n>d",
    );
  });

  it('accepts only the reject overflow policy', () => {
    expect(InboxBlockSchema.safeParse({ overflow: 'reject' }).success).toBe(true);
    expect(InboxBlockSchema.safeParse({ overflow: 'drop_oldest' }).success).toBe(false);
  });

  it('rejects unknown keys at every level', () => {
    expect(RuleSchema.safeParse({ owner: 'x' }).success).toBe(false);
    expect(RuleSchema.safeParse({ access: { inbound: ['*'] } }).success).toBe(false);
    expect(RuleSchema.safeParse({ limits: { max_agents: 3 } }).success).toBe(false);
    expect(RuleSchema.safeParse({ limits: { rate: { per_second: 1 } } }).success).toBe(false);
  });

  it('rejects negative limits', () => {
    expect(RuleSchema.safeParse({ limits: { delegation_depth: -1 } }).success).toBe(false);
    expect(RuleSchema.safeParse({ limits: { inbox: { max_pending: -1 } } }).success).toBe(false);
  });
});

describe('Rule globs', () => {
  it('refuses a malformed glob with the list, index and problem, and too many patterns', () => {
    const bad = RuleSchema.safeParse({ access: { inbound_from: ['*', '[b-a]'] } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['access.inbound_from.1', "invalid glob: reversed range 'b-a' in a set"],
    ]);
    const many = RuleSchema.safeParse({ access: { outbound_to: Array.from({ length: 65 }, (_, i) => `a${i}`) } });
    expect(many.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['access.outbound_to', 'at most 64 patterns'],
    ]);
    expect(RuleSchema.safeParse({ access: { channel_types: { accept: ['conv['] } } }).success).toBe(false);
  });
});
