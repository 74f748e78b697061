import { z } from 'zod';
import { repr } from './repr.js';
import { IdSchema } from './ids.js';

/** What kind of party a passport identifies. `null` on a passport means `agent`. */
export const PASSPORT_KINDS = ['agent', 'human', 'remote_agent'] as const;
export type PassportKind = (typeof PASSPORT_KINDS)[number];
export const PassportKindSchema = z.enum(PASSPORT_KINDS, {
  error: (issue) => `Passport.kind must be one of ('agent', 'human', 'remote_agent') or null; got ${repr(issue.input)}`,
});

/** How a party authenticates; `scheme: "none"` accepts everyone. */
export const AuthBlockSchema = z.strictObject({
  scheme: z.string().default('none'),
  issuer: z.string().nullable().default(null),
  audience: z.string().nullable().default(null),
  key_fingerprint: z.string().nullable().default(null),
  /** Scheme-specific claim, e.g. `{ "token": "…" }` for `api_key`. */
  claim: z.record(z.string(), z.unknown()).default({}),
});
export type AuthBlock = z.infer<typeof AuthBlockSchema>;

/** What an agent costs, in currency units per million tokens, and how fast it answers. */
export const CostProfileSchema = z.strictObject({
  input_per_mtok: z.number().min(0).nullable().default(null),
  output_per_mtok: z.number().min(0).nullable().default(null),
  latency_tier: z.string().nullable().default(null),
});
export type CostProfile = z.infer<typeof CostProfileSchema>;

/** Who an agent is. Names are unique per hub; `agent_id` and `created_at` are stamped at registration. */
export const PassportSchema = z.strictObject({
  name: z.string().min(1, 'Passport.name must not be empty').max(128),
  owner: z.string().default(''),
  provider: z.string().nullable().default(null),
  model: z.string().nullable().default(null),
  cost: CostProfileSchema.nullable().default(null),
  region: z.string().nullable().default(null),
  auth: AuthBlockSchema.prefault({}),
  kind: PassportKindSchema.nullable().default(null),
  hub_id: z.string().nullable().default(null),
  version: z.number().int().min(1).default(1),
  agent_id: IdSchema.nullable().default(null),
  created_at: z.string().default(''),
});
export type Passport = z.infer<typeof PassportSchema>;
export type PassportInput = z.input<typeof PassportSchema>;

/** AG2's `effective_kind`: the passport's kind, `agent` when unset. */
export function effectiveKind(passport: Pick<Passport, 'kind'>): PassportKind {
  return passport.kind ?? 'agent';
}

/** Outcomes the hub observed for one capability of an agent. */
export const ObservedStatSchema = z.strictObject({
  n: z.number().int().min(0).default(0),
  completed: z.number().int().min(0).default(0),
  failed: z.number().int().min(0).default(0),
  expired: z.number().int().min(0).default(0),
  p50_latency_ms: z.number().min(0).nullable().default(null),
});
export type ObservedStat = z.infer<typeof ObservedStatSchema>;

/** One piece of past work an agent points to. */
export const ResumeExampleSchema = z.strictObject({
  title: z.string(),
  outcome: z.string().default(''),
  task_id: z.string().nullable().default(null),
  channel_id: z.string().nullable().default(null),
  when: z.string().nullable().default(null),
  note: z.string().default(''),
});
export type ResumeExample = z.infer<typeof ResumeExampleSchema>;

/** What an agent claims to do, and (in `observed`) what the hub saw it do. */
export const ResumeSchema = z.strictObject({
  claimed_capabilities: z.array(z.string()).default([]),
  domains: z.array(z.string()).default([]),
  summary: z.string().default(''),
  examples: z.array(ResumeExampleSchema).default([]),
  observed: z.record(z.string(), ObservedStatSchema).default({}),
  version: z.number().int().min(1).default(1),
  last_updated: z.string().default(''),
});
export type Resume = z.infer<typeof ResumeSchema>;
export type ResumeInput = z.input<typeof ResumeSchema>;
