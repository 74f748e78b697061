import { z } from 'zod';
import { DurationSchema } from './duration.js';

const GlobListSchema = z.array(z.string()).default(['*']);

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

/** The default rule: everyone in and out, AG2's default limits. */
export function defaultRule(): Rule {
  return RuleSchema.parse({});
}
