import { z } from 'zod';
import { CloseReason } from './close-reason.js';

/**
 * A tool result that hands the workflow turn to another agent. `target` is a passport name (resolved to an id
 * when the round envelope is built; an unknown name passes through verbatim and the adapter rejects it).
 */
export const HandoffSchema = z.strictObject({
  kind: z.literal('handoff'),
  target: z.string().min(1),
  reason: z.string().default(''),
});
export type Handoff = z.infer<typeof HandoffSchema>;

/** A tool result that ends the workflow; `reason` becomes the channel's close reason. */
export const FinishSchema = z.strictObject({
  kind: z.literal('finish'),
  summary: z.string().default(''),
  reason: z.string().default(CloseReason.Finished),
});
export type Finish = z.infer<typeof FinishSchema>;

/** `Handoff(target, reason="")`. */
export function handoff(target: string, reason = ''): Handoff {
  return { kind: 'handoff', target, reason };
}

/** `Finish(summary="", reason="finished")`. */
export function finish(summary = '', reason: string = CloseReason.Finished): Finish {
  return { kind: 'finish', summary, reason };
}
