import { z } from 'zod';

/** A serialised target or condition: its registry name and constructor args. */
export const TransitionSpecSchema = z.looseObject({
  name: z.string(),
  args: z.record(z.string(), z.unknown()).default({}),
});
export type TransitionSpec = z.infer<typeof TransitionSpecSchema>;

/** A serialised transition. A `then` of `null` is `TerminateTarget()`, as in AG2. */
export const TransitionDictSchema = z.looseObject({
  when: TransitionSpecSchema,
  then: TransitionSpecSchema.nullable(),
  priority: z.int().default(0),
});
export type TransitionDict = z.infer<typeof TransitionDictSchema>;

/**
 * AG2's `TransitionGraph.to_dict()`, the form a graph takes in `knobs.graph`. Loading applies AG2's defaults:
 * no `transitions` is `[]`, no `priority` is 0, a missing or `null` `default_target` is `TerminateTarget()`, no
 * `max_turns` is `null`. Unknown keys are ignored, as AG2 ignores them.
 */
export const TransitionGraphDictSchema = z.looseObject({
  initial_speaker: z.string(),
  transitions: z.array(TransitionDictSchema).default([]),
  default_target: TransitionSpecSchema.nullable().default(null),
  max_turns: z.int().nullable().default(null),
});
export type TransitionGraphDict = z.infer<typeof TransitionGraphDictSchema>;
export type TransitionGraphDictInput = z.input<typeof TransitionGraphDictSchema>;
