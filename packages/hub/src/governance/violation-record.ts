import { EV_EXPECTATION_VIOLATED, type Envelope } from '@ag2net/protocol';
import { z } from 'zod';

/**
 * The `event_data` of the `ag2.expectation.violated` envelope the hub appends to a channel's log when a violation
 * fires: AG2's `{ expectation, violators, detail }` plus what makes the record self-describing and replayable —
 * the handler, the expectation's params and position in the manifest, and the occurrence scope (`turn:<sequence>`
 * for `turn_within`, `""` otherwise). Only the hub writes these envelopes; admission refuses them from clients.
 */
export const ViolationRecordSchema = z.looseObject({
  expectation: z.string(),
  violators: z.array(z.string()),
  detail: z.record(z.string(), z.unknown()),
  on_violation: z.string(),
  params: z.record(z.string(), z.unknown()).default({}),
  expectation_index: z.number().int().min(0),
  scope: z.string().default(''),
});
export type ViolationRecord = z.infer<typeof ViolationRecordSchema>;

/** The record an envelope carries, or `null` when it is not a well-formed violation record. */
export function violationRecordOf(envelope: Envelope): ViolationRecord | null {
  if (envelope.event_type !== EV_EXPECTATION_VIOLATED) return null;
  const parsed = ViolationRecordSchema.safeParse(envelope.event_data);
  return parsed.success ? parsed.data : null;
}

/**
 * The identity of one fired violation: which expectation (position and name), who (`""` for a channel-wide one) and
 * which occurrence. A key fires once per channel; the record of it in the WAL is what makes it fired.
 */
export function firedKey(index: number, expectation: string, violator: string, scope: string): string {
  return `${index}/${expectation}/${violator}/${scope}`;
}

/** The fired keys a record stands for: one per violator, or one channel-wide key. */
export function keysOf(record: ViolationRecord): string[] {
  const who = record.violators.length > 0 ? record.violators : [''];
  return who.map((v) => firedKey(record.expectation_index, record.expectation, v, record.scope));
}
