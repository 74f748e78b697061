import { isHistoryExpired } from '@ag2net/client';
import { ErrorCode, type ChannelMetadata } from '@ag2net/protocol';
import { CliError } from './exit.js';

/** What the line about a channel whose history expired is made of. */
type Ended = Pick<ChannelMetadata, 'channel_id' | 'closed_at' | 'created_at' | 'expired_at'>;

const UNITS: readonly (readonly [number, string])[] = [
  [86_400_000, 'd'],
  [3_600_000, 'h'],
  [60_000, 'm'],
  [1000, 's'],
];

/**
 * A retention in the notation of `hub-service --retain-closed`: the largest unit it is a whole number of (`30d`,
 * `1h`, `90m`, `45s`); what is not a whole second is rounded down.
 */
export function retentionLabel(ms: number): string {
  const whole = Math.max(0, Math.floor(ms / 1000) * 1000);
  const [size, unit] = UNITS.find(([size]) => whole >= size && whole % size === 0) ?? [1000, 's'];
  return `${whole / size}${unit}`;
}

/**
 * `history of channel <id> expired at <ts> (kept 1h after it ended); it can no longer be read or exported` for a
 * channel whose metadata carries `expired_at`; `null` while its history is kept.
 */
export function expiredHistoryLine(channel: Ended): string | null {
  if (channel.expired_at === undefined) return null;
  const ended = Date.parse(channel.closed_at ?? channel.created_at);
  const kept = Date.parse(channel.expired_at) - ended;
  const after = Number.isNaN(kept) ? '' : ` (kept ${retentionLabel(kept)} after it ended)`;
  return `history of channel ${channel.channel_id} expired at ${channel.expired_at}${after}; it can no longer be read or exported`;
}

/** The failure of a command that needs the history of a channel whose history expired: that line, exit 3. */
export function expiredHistoryError(channel: Ended, cause?: unknown): CliError {
  const line = expiredHistoryLine(channel) ?? `history of channel ${channel.channel_id} expired`;
  return new CliError(line, ErrorCode.NotFound, cause === undefined ? {} : { cause });
}

/** Throws `expiredHistoryError` when the channel's metadata says its history expired. */
export function requireHistory(channel: Ended): void {
  if (channel.expired_at !== undefined) throw expiredHistoryError(channel);
}

/**
 * `err` as the command reports it: the hub's `not_found` of an expired history (its retention ran out between the
 * read of the metadata and this read) becomes `expiredHistoryError` of `channel`; anything else is `err` itself.
 */
export function historyRefusal(err: unknown, channel: Ended): unknown {
  if (!isHistoryExpired(err)) return err;
  return expiredHistoryError({ ...channel, expired_at: err.details.expired_at }, err);
}
