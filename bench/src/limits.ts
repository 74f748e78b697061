import type { OperatorLimits } from '@ag2net/hub';

/**
 * The operator's limits lifted for the bench, which measures admission and delivery, not governance: the hub is
 * started with them, and the raw baselines' streams get the same quotas, so that neither side hits a cap the other
 * does not (an inbox capped at the default 10,000 messages refuses the baseline's fan-out after 10,000 per agent).
 */
export const BENCH_LIMITS = {
  postsPerMinute: 100_000_000,
  postBurst: 10_000_000,
  maxConcurrentChannels: 10_000_000,
  maxPending: 100_000_000,
  inboxMaxMessages: 100_000_000,
} as const satisfies OperatorLimits;
