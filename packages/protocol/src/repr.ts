/**
 * Formats a value the way Python's `repr` does, so that error messages match AG2's byte for byte
 * (`'c1'`, `['round_robin']`, `None`, `True`). Used in messages only, never on data.
 */
export function repr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'string') return reprString(value);
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return reprNumber(value);
  if (typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) return `[${value.map(repr).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value).map(([k, v]) => `${reprString(k)}: ${repr(v)}`);
    return `{${entries.join(', ')}}`;
  }
  if (typeof value === 'symbol') return value.toString();
  return '<function>';
}

/**
 * A finite number as Python's `repr(float)` writes it where the two languages differ: exponent notation
 * below 1e-4 (`1e-05`, JavaScript `0.00001`) and exponents of at least two digits (`1e-07`, JavaScript
 * `1e-7`). Integral values print as integers, since JavaScript cannot tell `1.0` from `1`.
 */
export function formatPythonNumber(value: number): string {
  const abs = Math.abs(value);
  const text = !Number.isInteger(value) && abs < 1e-4 ? value.toExponential() : String(value);
  return text.replace(/e([+-])(\d)$/, 'e$10$2');
}

function reprNumber(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (value === Infinity) return 'inf';
  if (value === -Infinity) return '-inf';
  return formatPythonNumber(value);
}

const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

// Python's `str.isprintable()` is false for these categories (the space itself is printable).
const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

function reprString(value: string): string {
  const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of value) {
    const short = SHORT_ESCAPES[ch];
    if (short !== undefined) out += short;
    else if (ch === quote) out += `\\${ch}`;
    else if (ch !== ' ' && NON_PRINTABLE.test(ch)) out += escapeCodePoint(ch.codePointAt(0) ?? 0);
    else out += ch;
  }
  return out + quote;
}

function escapeCodePoint(code: number): string {
  if (code < 0x100) return `\\x${code.toString(16).padStart(2, '0')}`;
  if (code < 0x10000) return `\\u${code.toString(16).padStart(4, '0')}`;
  return `\\U${code.toString(16).padStart(8, '0')}`;
}
