import type { ChannelMetadata } from '@ag2net/protocol';
import { parseTime, remainingLabel } from './time.js';

// A channel whose history expired: the hub's retention removed its log after the channel ended. Its metadata stays
// (with `expired_at`); a read of its log, state or stream answers `not_found` with `details.reason` `expired`.

/** `details.reason` of the hub's answer to a read of a channel whose history expired. */
export const HISTORY_EXPIRED = 'expired';

/** When the history expired, as the hub's refusal of a read says it (`details.expired_at`); `null` for any other. */
export function expiredAtOf(
  refusal: { readonly code: string; readonly details?: Readonly<Record<string, unknown>> | undefined } | null,
): string | null {
  if (refusal?.code !== 'not_found' || refusal.details?.['reason'] !== HISTORY_EXPIRED) return null;
  const at = refusal.details['expired_at'];
  return typeof at === 'string' && parseTime(at) !== null ? at : null;
}

/** How long the history was kept after the channel ended ("1 h", "30 d", "1 h 30 min"); `null` when unknown. */
export function keptLabel(
  channel: Pick<ChannelMetadata, 'closed_at' | 'created_at'>,
  expiredAt: string,
): string | null {
  const ended = parseTime(channel.closed_at) ?? parseTime(channel.created_at);
  const expired = parseTime(expiredAt);
  if (ended === null || expired === null || expired < ended) return null;
  return remainingLabel((expired - ended) / 1000);
}

/** The day and time the history expired, in the reader's locale and time zone ("January 1, 2026 at 1:00 AM"). */
export function expiredOnLabel(expiredAt: string): string {
  const at = parseTime(expiredAt);
  return at === null ? expiredAt : new Date(at).toLocaleString(undefined, { dateStyle: 'long', timeStyle: 'short' });
}
