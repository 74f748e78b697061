/** True for a plain JSON object (what Python calls a dict): not `null`, not an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Python's `==` over JSON values, which AG2 uses to compare context variables: deep equality for lists and dicts,
 * and booleans equal to the numbers 1 and 0 (`True == 1`). `undefined` counts as `None`.
 */
export function pythonEquals(a: unknown, b: unknown): boolean {
  const x = a === undefined ? null : a;
  const y = b === undefined ? null : b;
  if (isNumeric(x) && isNumeric(y)) return Number(x) === Number(y);
  if (Array.isArray(x) || Array.isArray(y)) {
    return Array.isArray(x) && Array.isArray(y) && x.length === y.length && x.every((v, i) => pythonEquals(v, y[i]));
  }
  if (isRecord(x) && isRecord(y)) {
    const keys = Object.keys(x);
    return keys.length === Object.keys(y).length && keys.every((k) => Object.hasOwn(y, k) && pythonEquals(x[k], y[k]));
  }
  return x === y;
}

function isNumeric(value: unknown): value is number | boolean {
  return typeof value === 'number' || typeof value === 'boolean';
}
