/** `str(exc)` for an error of any kind. */
export function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A number as Python formats a `float` in an f-string: `300.0`, `0.5`. Tool timeouts are floats in AG2. */
export function pyFloat(value: number): string {
  return Number.isInteger(value) ? `${value}.0` : String(value);
}
