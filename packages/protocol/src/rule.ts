import { z } from 'zod';
import { DurationSchema } from './duration.js';
import { MAX_GLOBS_PER_LIST, globProblem } from './glob.js';

/**
 * A list of globs as a rule states it: at most `MAX_GLOBS_PER_LIST` patterns, each well-formed (`parseGlob`). The
 * message names the first bad pattern's position and problem, never the pattern itself, so it stays short.
 */
const GlobListSchema = z
  .array(z.string())
  .max(MAX_GLOBS_PER_LIST, `at most ${MAX_GLOBS_PER_LIST} patterns`)
  .superRefine((patterns, ctx) => {
    for (const [index, pattern] of patterns.entries()) {
      const problem = globProblem(pattern);
      if (problem !== null) {
        ctx.addIssue({ code: 'custom', path: [index], message: `invalid glob: ${problem}` });
        return;
      }
    }
  })
  .default(['*']);

/** Which channel types an agent may initiate and accept (globs). */
export const ChannelTypeAccessSchema = z.strictObject({
  initiate: GlobListSchema,
  accept: GlobListSchema,
});
export type ChannelTypeAccess = z.infer<typeof ChannelTypeAccessSchema>;

/** Who an agent may send to and receive from, as globs over passport names. */
export const AccessBlockSchema = z.strictObject({
  inbound_from: GlobListSchema,
  outbound_to: GlobListSchema,
  channel_types: ChannelTypeAccessSchema.prefault({}),
});
export type AccessBlock = z.infer<typeof AccessBlockSchema>;

/**
 * The access block as the hub reads it back from storage: the same shape without the glob checks, so that a rule
 * stored before patterns were validated still loads (its malformed patterns match nothing).
 */
const StoredGlobListSchema = z.array(z.string()).default(['*']);
const StoredAccessBlockSchema = z.strictObject({
  inbound_from: StoredGlobListSchema,
  outbound_to: StoredGlobListSchema,
  channel_types: z.strictObject({ initiate: StoredGlobListSchema, accept: StoredGlobListSchema }).prefault({}),
});

/** A token bucket over admitted envelopes: `per_minute` refill, `burst` capacity. 0 disables. */
export const RateBlockSchema = z.strictObject({
  per_minute: z.number().int().min(0).default(0),
  burst: z.number().int().min(0).default(0),
});
export type RateBlock = z.infer<typeof RateBlockSchema>;

/** How many undelivered envelopes an agent's inbox holds before senders get `inbox_full`. */
export const InboxBlockSchema = z.strictObject({
  max_pending: z.number().int().min(0).default(1000),
  overflow: z.literal('reject').default('reject'),
  high_water: z.number().int().min(0).nullable().default(null),
});
export type InboxBlock = z.infer<typeof InboxBlockSchema>;

/** Numeric caps; 0 disables a cap. */
export const LimitsBlockSchema = z.strictObject({
  max_concurrent_channels: z.number().int().min(0).default(0),
  max_concurrent_tasks: z.number().int().min(0).default(0),
  channel_ttl_default: DurationSchema.default('2h'),
  task_ttl_default: DurationSchema.default('15m'),
  rate: RateBlockSchema.prefault({}),
  delegation_depth: z.number().int().min(0).default(5),
  inbox: InboxBlockSchema.prefault({}),
});
export type LimitsBlock = z.infer<typeof LimitsBlockSchema>;

/** An agent's access rules and limits, enforced by the hub's arbiter. */
export const RuleSchema = z.strictObject({
  version: z.number().int().min(1).default(1),
  access: AccessBlockSchema.prefault({}),
  limits: LimitsBlockSchema.prefault({}),
});
export type Rule = z.infer<typeof RuleSchema>;
export type RuleInput = z.input<typeof RuleSchema>;

/** A rule as stored by the hub: `RuleSchema` without the glob checks (see `StoredAccessBlockSchema`). */
export const StoredRuleSchema = z.strictObject({
  version: z.number().int().min(1).default(1),
  access: StoredAccessBlockSchema.prefault({}),
  limits: LimitsBlockSchema.prefault({}),
});

/** The default rule: everyone in and out, AG2's default limits. */
export function defaultRule(): Rule {
  return RuleSchema.parse({});
}
