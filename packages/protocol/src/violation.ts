import { z } from 'zod';
import type { Envelope } from './envelope.js';
import { ExpectationViolatedDataSchema } from './event-data.js';
import { EV_EXPECTATION_VIOLATED } from './events.js';

/**
 * The names of the built-in violation handlers, as a manifest's expectation names them in `on_violation`. The set is
 * open: a hub may register custom handlers under other names.
 */
export const ViolationHandlerName = {
  /** Records the violation in the audit trail only. */
  Audit: 'audit',
  /** Also tells every participant with an `ag2.expectation.violated` envelope. */
  NotifyChannel: 'notify_channel',
  /** Also tells the violators (every participant for a channel-wide violation). */
  Warn: 'warn',
  /** Closes the channel with `expectation_violated:<name>`. */
  AutoClose: 'auto_close',
  /** Takes the violators out of the turn rotation until they speak again; tells them. */
  Hide: 'hide',
} as const;
export type ViolationHandlerName = (typeof ViolationHandlerName)[keyof typeof ViolationHandlerName];

/**
 * The `event_data` of the `ag2.expectation.violated` envelope the hub appends to a channel's log when a violation
 * fires, and the body of its `expectation_violated` audit record: AG2's `{ expectation, violators, detail }` plus
 * what makes the record self-describing and replayable — the handler (`on_violation`), the expectation's `params`,
 * its position in the manifest (`expectation_index`) and the occurrence `scope` (`turn:<sequence>` for
 * `turn_within`, `""` otherwise). Only the hub writes these envelopes; admission refuses them from clients.
 */
export const ViolationRecordSchema = ExpectationViolatedDataSchema.extend({
  on_violation: z.string(),
  params: z.record(z.string(), z.unknown()).default({}),
  expectation_index: z.number().int().min(0),
  scope: z.string().default(''),
});
export type ViolationRecord = z.infer<typeof ViolationRecordSchema>;

/** The violation record an envelope carries, or `null` when it is not a well-formed one. */
export function violationRecordOf(envelope: Envelope): ViolationRecord | null {
  if (envelope.event_type !== EV_EXPECTATION_VIOLATED) return null;
  const parsed = ViolationRecordSchema.safeParse(envelope.event_data);
  return parsed.success ? parsed.data : null;
}
