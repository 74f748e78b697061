import { ErrorReason, IdSchema, NotFoundError, TimestampSchema } from '@ag2net/protocol';
import { z } from 'zod';

/**
 * `details` of the `not_found` that `readWal` and `adapterState` answer for a channel whose history expired: the hub's
 * history retention (`hub-service --retain-closed`) removed its log `expired_at`; its metadata is still there.
 */
export const HistoryExpiredDetailsSchema = z.looseObject({
  reason: z.literal(ErrorReason.HistoryExpired),
  channel_id: IdSchema,
  /** When the history expired: the channel's `closed_at` plus the hub's retention (ISO-8601). */
  expired_at: TimestampSchema,
});
export type HistoryExpiredDetails = z.infer<typeof HistoryExpiredDetailsSchema>;

/** The `not_found` of a read of a channel whose history expired, its `details` checked. */
export type HistoryExpiredError = NotFoundError & { readonly details: HistoryExpiredDetails };

/**
 * True when `err` is the hub's answer to a read of a channel whose history expired: a `NotFoundError` whose
 * `details.reason` is `expired` (with `channel_id` and `expired_at`). Any other `not_found` (a channel that does not
 * exist, or one the caller may not see) is false.
 *
 * @example
 * ```ts
 * try {
 *   await hub.call('readWal', { channel_id }, { caller });
 * } catch (err) {
 *   if (isHistoryExpired(err)) console.log(`expired at ${err.details.expired_at}`);
 *   else throw err;
 * }
 * ```
 */
export function isHistoryExpired(err: unknown): err is HistoryExpiredError {
  return err instanceof NotFoundError && HistoryExpiredDetailsSchema.safeParse(err.details).success;
}

/**
 * When the channel's history expired (ISO-8601), read from either what says so: a channel's metadata
 * (`getChannel`, `listChannels`: its `expired_at`) or the error a read of its history threw (`isHistoryExpired`).
 * `null` for metadata of a channel whose history is kept, and for any other value.
 */
export function historyExpiredAt(from: unknown): string | null {
  if (isHistoryExpired(from)) return from.details.expired_at;
  if (from instanceof Error || typeof from !== 'object' || from === null || !('expired_at' in from)) return null;
  const parsed = TimestampSchema.safeParse(from.expired_at);
  return parsed.success ? parsed.data : null;
}
