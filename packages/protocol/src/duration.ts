import { z } from 'zod';
import { repr } from './repr.js';

const UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86400 };

/**
 * AG2's `parse_duration`: a number of seconds passes through; `""` is 0; `<n>s|m|h|d` is n seconds, minutes,
 * hours or days; a bare integer string is seconds. Anything else throws a `RangeError`
 * (`"30s"` → 30, `"15m"` → 900, `"2h"` → 7200, `"1d"` → 86400, `"60"` → 60; `"5x"`, `"fast"` throw).
 */
export function parseDuration(value: string | number): number {
  if (typeof value === 'number') {
    if (!Number.isInteger(value))
      throw new RangeError(`invalid duration ${repr(value)}: not a whole number of seconds`);
    return value;
  }
  const text = value.trim();
  if (text === '') return 0;
  const match = /^(-?\d+)([smhd]?)$/.exec(text);
  const digits = match?.[1];
  if (digits === undefined) {
    throw new RangeError(`invalid duration ${repr(value)}: expected seconds or <n>s, <n>m, <n>h, <n>d`);
  }
  return Number.parseInt(digits, 10) * (UNIT_SECONDS[match?.[2] ?? ''] ?? 1);
}

/** The longest duration a rule or channel option may state: 365 days, in seconds. */
export const MAX_DURATION_SECONDS = 365 * 86_400;

/**
 * A duration as rules and channel options write it: seconds, or a string `parseDuration` accepts, at most
 * `MAX_DURATION_SECONDS` either way (a larger one would overflow the dates computed from it).
 */
export const DurationSchema = z.union([z.number().int(), z.string().max(64)]).superRefine((value, ctx) => {
  let seconds: number;
  try {
    seconds = parseDuration(value);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: err instanceof Error ? err.message : String(err) });
    return;
  }
  if (!(Math.abs(seconds) <= MAX_DURATION_SECONDS)) {
    ctx.addIssue({
      code: 'custom',
      message: `invalid duration ${repr(value, { maxChars: 40 })}: at most ${MAX_DURATION_SECONDS} seconds (365 days)`,
    });
  }
});
export type Duration = z.infer<typeof DurationSchema>;
