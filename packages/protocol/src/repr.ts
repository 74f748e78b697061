/** How many characters `repr` writes before it truncates (see `ReprOptions.maxChars`). */
export const REPR_MAX_CHARS = 200;
/** How deep `repr` descends into lists and dicts before it writes `...` for the rest. */
export const REPR_MAX_DEPTH = 16;

/** Options of `repr`. */
export interface ReprOptions {
  /**
   * The most characters of the representation to write (default `REPR_MAX_CHARS`). A longer one is cut there
   * and ends in `…` and the size of the original (`… (250000 chars)`, `… (3000 items)`, `… (12 keys)`), so that
   * an error message quoting user input stays short whatever the input.
   */
  readonly maxChars?: number;
}

/**
 * Formats a value the way Python's `repr` does, so that error messages match AG2's byte for byte
 * (`'c1'`, `['round_robin']`, `None`, `True`). Used in messages only, never on data.
 *
 * Bounded for hostile input: the output is at most `maxChars` characters plus a short suffix, the work done is
 * proportional to that (a 250,000-character string or a million-element list costs no more than a short one),
 * and nesting deeper than `REPR_MAX_DEPTH` is written `...` (Python's `reprlib` does the same), so deeply nested
 * input cannot overflow the stack.
 */
export function repr(value: unknown, options: ReprOptions = {}): string {
  const maxChars = options.maxChars ?? REPR_MAX_CHARS;
  const out = new Writer(maxChars);
  write(out, value, 0);
  if (!out.full) return out.text;
  return `${out.text.slice(0, maxChars)}… (${sizeOf(value)})`;
}

/** Collects output until one character past the budget, then ignores the rest. */
class Writer {
  text = '';
  constructor(private readonly budget: number) {}

  get full(): boolean {
    return this.text.length > this.budget;
  }

  push(chunk: string): void {
    if (!this.full) this.text += chunk.length > this.budget + 1 ? chunk.slice(0, this.budget + 1) : chunk;
  }
}

function sizeOf(value: unknown): string {
  if (typeof value === 'string') return `${value.length} chars`;
  if (Array.isArray(value)) return `${value.length} items`;
  if (typeof value === 'object' && value !== null) return `${Object.keys(value).length} keys`;
  return 'truncated';
}

function write(out: Writer, value: unknown, depth: number): void {
  if (value === null || value === undefined) out.push('None');
  else if (typeof value === 'string') writeString(out, value);
  else if (typeof value === 'boolean') out.push(value ? 'True' : 'False');
  else if (typeof value === 'number') out.push(reprNumber(value));
  else if (typeof value === 'bigint') out.push(String(value));
  else if (typeof value === 'symbol') out.push(value.toString());
  else if (typeof value === 'function') out.push('<function>');
  else if (depth >= REPR_MAX_DEPTH) out.push(Array.isArray(value) ? '[...]' : '{...}');
  else if (Array.isArray(value)) writeList(out, value, depth);
  else writeDict(out, value, depth);
}

function writeList(out: Writer, value: readonly unknown[], depth: number): void {
  out.push('[');
  for (let i = 0; i < value.length && !out.full; i++) {
    if (i > 0) out.push(', ');
    write(out, value[i], depth + 1);
  }
  out.push(']');
}

function writeDict(out: Writer, value: object, depth: number): void {
  out.push('{');
  let first = true;
  // `for…in` over own keys stops as soon as the budget is spent; `Object.entries` would copy every key first.
  for (const key in value) {
    if (out.full) break;
    if (!Object.hasOwn(value, key)) continue;
    if (!first) out.push(', ');
    first = false;
    writeString(out, key);
    out.push(': ');
    const item: unknown = Reflect.get(value, key);
    write(out, item, depth + 1);
  }
  out.push('}');
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

function writeString(out: Writer, value: string): void {
  const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
  out.push(quote);
  for (const ch of value) {
    if (out.full) return;
    const short = SHORT_ESCAPES[ch];
    if (short !== undefined) out.push(short);
    else if (ch === quote) out.push(`\\${ch}`);
    else if (ch !== ' ' && NON_PRINTABLE.test(ch)) out.push(escapeCodePoint(ch.codePointAt(0) ?? 0));
    else out.push(ch);
  }
  out.push(quote);
}

function escapeCodePoint(code: number): string {
  if (code < 0x100) return `\\x${code.toString(16).padStart(2, '0')}`;
  if (code < 0x10000) return `\\u${code.toString(16).padStart(4, '0')}`;
  return `\\U${code.toString(16).padStart(8, '0')}`;
}
