import { defaultRule } from '@ag2net/protocol/internal';
import { RuleSchema } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { DEFAULT_OPERATOR_LIMITS, operatorLimitsWithDefaults, withinCeilings } from './operator-limits.js';

const limits = operatorLimitsWithDefaults({ postsPerMinute: 120, postBurst: 10, maxPending: 50 });

describe('withinCeilings', () => {
  it('turns every no-cap (0) into the ceiling and keeps the rest of the rule', () => {
    const held = withinCeilings(RuleSchema.parse({ limits: { max_concurrent_channels: 0 } }), limits);
    expect(held.limits).toEqual({
      ...defaultRule().limits,
      max_concurrent_channels: 100,
      max_concurrent_tasks: 100,
      rate: { per_minute: 120, burst: 10 },
      inbox: { max_pending: 50, overflow: 'reject', high_water: null },
    });
    expect(held.access).toEqual(defaultRule().access);
  });

  it('lowers a wish above the ceiling and keeps a stricter one', () => {
    const rule = RuleSchema.parse({
      limits: { rate: { per_minute: 1_000, burst: 3 }, delegation_depth: 2, inbox: { max_pending: 80 } },
    });
    const held = withinCeilings(rule, limits).limits;
    expect([held.rate, held.delegation_depth, held.inbox.max_pending]).toEqual([{ per_minute: 120, burst: 3 }, 2, 50]);
  });

  it('reads a burst of 0 as per_minute before holding it under the burst ceiling', () => {
    const slow = RuleSchema.parse({ limits: { rate: { per_minute: 6, burst: 0 } } });
    expect(withinCeilings(slow, limits).limits.rate).toEqual({ per_minute: 6, burst: 6 });
    const fast = RuleSchema.parse({ limits: { rate: { per_minute: 100, burst: 0 } } });
    expect(withinCeilings(fast, limits).limits.rate).toEqual({ per_minute: 100, burst: 10 });
  });

  it('is idempotent', () => {
    const once = withinCeilings(defaultRule(), DEFAULT_OPERATOR_LIMITS);
    expect(withinCeilings(once, DEFAULT_OPERATOR_LIMITS)).toEqual(once);
  });
});
