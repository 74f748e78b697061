/** "3 min ago", "in 2 h", "just now": `at` relative to `now`, both epoch milliseconds. */
export function relativeTime(at: number, now: number): string {
  const seconds = Math.round((at - now) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 5) return 'just now';
  const [value, unit] =
    abs < 60
      ? [abs, 's']
      : abs < 3600
        ? [Math.floor(abs / 60), 'min']
        : abs < 86_400
          ? [Math.floor(abs / 3600), 'h']
          : [Math.floor(abs / 86_400), 'd'];
  return seconds < 0 ? `${value} ${unit} ago` : `in ${value} ${unit}`;
}

/** A duration in seconds as "45 s", "12 min", "3 h", "2 d" (floored). */
export function shortDuration(seconds: number): string {
  const abs = Math.max(0, Math.floor(seconds));
  if (abs < 60) return `${abs} s`;
  if (abs < 3600) return `${Math.floor(abs / 60)} min`;
  if (abs < 86_400) return `${Math.floor(abs / 3600)} h`;
  return `${Math.floor(abs / 86_400)} d`;
}

/** Epoch milliseconds of an ISO timestamp; `null` for empty or unparsable text. */
export function parseTime(text: string | null | undefined): number | null {
  if (text === null || text === undefined || text === '') return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
}

/** How far ahead of the browser's clock the hub's may run and its timestamps still read as the present. */
export const CLOCK_SKEW_MS = 10 * 60_000;

/**
 * When something happened, relative to `now`: a timestamp up to `CLOCK_SKEW_MS` in the future is the hub's clock
 * running ahead of the browser's, so it reads "just now"; anything else as `relativeTime`.
 */
export function pastTime(at: number, now: number): string {
  return at > now && at - now < CLOCK_SKEW_MS ? 'just now' : relativeTime(at, now);
}

/** A channel's TTL: "—" once it ended (closed, closing or expired), "none" without one, "expired", else "in 1 h". */
export function ttlLabel(state: string, expiresAt: number | null, now: number): string {
  if (state === 'closed' || state === 'closing' || state === 'expired') return '—';
  if (expiresAt === null) return 'none';
  return expiresAt > now ? relativeTime(expiresAt, now) : 'expired';
}
