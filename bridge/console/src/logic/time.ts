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

/** "1 h 59 min", "12 min", "45 s", "2 d 3 h": `seconds` (floored) in its two largest units, a zero second unit left out. */
export function remainingLabel(seconds: number): string {
  const total = Math.max(0, Math.floor(seconds));
  const units: readonly (readonly [number, string])[] = [
    [86_400, 'd'],
    [3600, 'h'],
    [60, 'min'],
    [1, 's'],
  ];
  const i = units.findIndex(([size]) => total >= size);
  const [size, unit] = units[i] ?? [1, 's'];
  const first = `${Math.floor(total / size)} ${unit}`;
  const next = units[i + 1];
  if (next === undefined || i < 0) return first;
  const rest = Math.floor((total % size) / next[0]);
  return rest === 0 ? first : `${first} ${rest} ${next[1]}`;
}

/**
 * A channel's TTL, the one way the console says it (the channel list and the channel page alike): "—" once it ended
 * (closing, closed or expired), "none" without an expiry, "expired" once past it, else "in 1 h 59 min". The time
 * left is counted from `now`, but never from before the channel was created: a hub clock running ahead of the
 * browser's would otherwise show more than the channel's whole TTL.
 */
export function ttlLabel(
  channel: { readonly state: string; readonly expires_at: string | null; readonly created_at: string },
  now: number,
): string {
  if (channel.state === 'closed' || channel.state === 'closing' || channel.state === 'expired') return '—';
  const expires = parseTime(channel.expires_at);
  if (expires === null) return 'none';
  const from = Math.max(now, parseTime(channel.created_at) ?? now);
  return expires > from ? `in ${remainingLabel((expires - from) / 1000)}` : 'expired';
}

/** How long something took: "850 ms", "4.2 s", "12 s", "2 min 5 s", "1 h 3 min". */
export function durationLabel(ms: number): string {
  const abs = Math.max(0, ms);
  if (abs < 1000) return `${Math.round(abs)} ms`;
  if (abs < 10_000) return `${(Math.floor(abs / 100) / 10).toFixed(1)} s`;
  return remainingLabel(abs / 1000);
}
