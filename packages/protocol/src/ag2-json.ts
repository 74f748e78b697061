import type { Envelope } from './envelope.js';
import { formatPythonNumber } from './repr.js';

/**
 * Serialises a JSON value exactly as Python's `json.dumps(value, sort_keys=True)` does, which is how AG2 writes
 * envelopes to its logs: keys sorted by code point, `", "` and `": "` separators, non-ASCII escaped as `\uXXXX`.
 * Floats print as Python's `repr` does (`1e-05`, `1e-07`); JavaScript cannot tell `1.0` from `1`, so a float
 * with no fraction prints as an integer.
 */
export function encodeAg2Json(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return encodeNumber(value);
  if (typeof value === 'string') return encodeString(value);
  if (Array.isArray(value)) return `[${value.map(encodeAg2Json).join(', ')}]`;
  if (typeof value === 'object') {
    const keys = Object.keys(value)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort(compareCodePoints);
    const entries = keys.map((k) => `${encodeString(k)}: ${encodeAg2Json((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(', ')}}`;
  }
  throw new TypeError(`cannot encode a ${typeof value} as JSON`);
}

/** The envelope as AG2's `Envelope.to_dict()` has it: AG2 has no `sequence`, so it is left out. */
export function toAg2Dict(envelope: Envelope): Omit<Envelope, 'sequence'> {
  const { sequence: _sequence, ...rest } = envelope;
  return rest;
}

/** The envelope as AG2's `Envelope.to_json()` writes it, byte for byte. */
export function encodeAg2Envelope(envelope: Envelope): string {
  return encodeAg2Json(toAg2Dict(envelope));
}

function compareCodePoints(a: string, b: string): number {
  const ca = Array.from(a);
  const cb = Array.from(b);
  for (let i = 0; i < Math.min(ca.length, cb.length); i += 1) {
    const d = (ca[i]?.codePointAt(0) ?? 0) - (cb[i]?.codePointAt(0) ?? 0);
    if (d !== 0) return d;
  }
  return ca.length - cb.length;
}

function encodeNumber(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return 'Infinity';
  if (value === -Infinity) return '-Infinity';
  return formatPythonNumber(value);
}

const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

function encodeString(value: string): string {
  let out = '"';
  for (let i = 0; i < value.length; i += 1) {
    const ch = value.charAt(i);
    const code = value.charCodeAt(i);
    const short = SHORT_ESCAPES[ch];
    if (short !== undefined) out += short;
    else if (code < 0x20 || code > 0x7e) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}
