import { formatIssues } from '@ag2net/protocol/internal';
import type { z } from 'zod';

/** A stored record parsed, or why it did not parse. */
export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

/** Parses stored JSON text with `schema`; never throws (what is stored is not trusted at hydrate). */
export function parseJson<T>(text: string, schema: z.ZodType<T>): Parsed<T> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `not JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return { ok: true, value: parsed.data };
  return { ok: false, reason: formatIssues('invalid', parsed.error.issues) };
}
