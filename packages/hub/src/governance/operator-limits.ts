import type { Rule } from '@ag2net/protocol';

/**
 * The operator's limits: ceilings on what an agent's own `Rule` may state, and quotas on the hub's streams and
 * buckets. An agent sets its rule itself (`register`, `setRule`), so a limit it states is only a wish to be
 * stricter: the hub stores each numeric limit as the smaller of the two, and a 0 ("no cap") as the ceiling.
 */
export interface OperatorLimits {
  /** Ceiling of `rate.per_minute`, posts per minute per sender; also what 0 (no limit) becomes. Default 6 000. */
  readonly postsPerMinute?: number;
  /** Ceiling of `rate.burst`, posts; also what 0 becomes. Default 1 000. */
  readonly postBurst?: number;
  /** Ceiling of `max_concurrent_channels`, open channels an agent created. Default 100. */
  readonly maxConcurrentChannels?: number;
  /** Ceiling of `max_concurrent_tasks`, an owner's tasks that have not ended. Default 100. */
  readonly maxConcurrentTasks?: number;
  /** Ceiling of `inbox.max_pending`, messages waiting in an inbox. Default 1 000. */
  readonly maxPending?: number;
  /** Ceiling of `delegation_depth`. Default 16. */
  readonly delegationDepth?: number;
  /**
   * The inbox stream's hard cap per agent, messages (`max_msgs_per_subject` with `discard_new_per_subject`): past
   * `max_pending`, only the hub's own notices reach an inbox; this bounds even those. A delivery the cap refuses is
   * retried and then dead-lettered. Default 10 000.
   */
  readonly inboxMaxMessages?: number;
  /** Largest message of the WAL, inbox and audit streams and largest KV value, bytes. Default 1 MiB. */
  readonly maxMessageBytes?: number;
  /**
   * `max_bytes` of the WAL, inbox and audit streams; -1 for none (default). JetStream reserves it against the
   * server's storage when the stream is created, so set it to what the server can hold for every hub on it.
   */
  readonly streamMaxBytes?: number;
  /** `max_bytes` of each KV bucket; -1 for none (default). Reserved like `streamMaxBytes`. */
  readonly bucketMaxBytes?: number;
}

export type ResolvedOperatorLimits = Required<OperatorLimits>;

/** The defaults, finite where a hostile agent could otherwise take without bound. */
export const DEFAULT_OPERATOR_LIMITS: Required<OperatorLimits> = Object.freeze({
  postsPerMinute: 6_000,
  postBurst: 1_000,
  maxConcurrentChannels: 100,
  maxConcurrentTasks: 100,
  maxPending: 1_000,
  delegationDepth: 16,
  inboxMaxMessages: 10_000,
  maxMessageBytes: 1024 * 1024,
  streamMaxBytes: -1,
  bucketMaxBytes: -1,
});

export function operatorLimitsWithDefaults(limits: OperatorLimits = {}): ResolvedOperatorLimits {
  const d = DEFAULT_OPERATOR_LIMITS;
  return Object.freeze({
    postsPerMinute: limits.postsPerMinute ?? d.postsPerMinute,
    postBurst: limits.postBurst ?? d.postBurst,
    maxConcurrentChannels: limits.maxConcurrentChannels ?? d.maxConcurrentChannels,
    maxConcurrentTasks: limits.maxConcurrentTasks ?? d.maxConcurrentTasks,
    maxPending: limits.maxPending ?? d.maxPending,
    delegationDepth: limits.delegationDepth ?? d.delegationDepth,
    inboxMaxMessages: limits.inboxMaxMessages ?? d.inboxMaxMessages,
    maxMessageBytes: limits.maxMessageBytes ?? d.maxMessageBytes,
    streamMaxBytes: limits.streamMaxBytes ?? d.streamMaxBytes,
    bucketMaxBytes: limits.bucketMaxBytes ?? d.bucketMaxBytes,
  });
}

/** `wanted` under `ceiling`: 0 (no cap) and anything above the ceiling become the ceiling. */
function capped(wanted: number, ceiling: number): number {
  return wanted === 0 || wanted > ceiling ? ceiling : wanted;
}

/**
 * The rule an agent asked for, with every limit held under the operator's ceilings. Access globs are the agent's
 * own business (they only narrow what reaches it and what it sends) and pass unchanged.
 */
export function withinCeilings(rule: Rule, limits: ResolvedOperatorLimits): Rule {
  const own = rule.limits;
  const perMinute = capped(own.rate.per_minute, limits.postsPerMinute);
  return {
    ...rule,
    limits: {
      ...own,
      max_concurrent_channels: capped(own.max_concurrent_channels, limits.maxConcurrentChannels),
      max_concurrent_tasks: capped(own.max_concurrent_tasks, limits.maxConcurrentTasks),
      delegation_depth: capped(own.delegation_depth, limits.delegationDepth),
      rate: {
        per_minute: perMinute,
        // A burst of 0 means "per_minute" in the bucket; held under the burst ceiling like any other.
        burst: capped(own.rate.burst === 0 ? perMinute : own.rate.burst, limits.postBurst),
      },
      inbox: { ...own.inbox, max_pending: capped(own.inbox.max_pending, limits.maxPending) },
    },
  };
}
