import { z } from 'zod';
import { DurationSchema, IdSchema, TimestampSchema, WIRE_SCHEMAS } from '../src/index.js';
import { UserPublicKeySchema } from '../src/internal.js';
import { SCHEMA_FILE_SUFFIX } from './schema-document.js';

/** Which side of the wire a schema is read from: what a client may write, or what the hub writes. */
export type Side = 'input' | 'output';

/** One row of an operation's field table. */
export interface FieldRow {
  /** Where the field is: `name`, a nested field `credentials.jwt`, a field of each item `turns[].channel_id`. */
  readonly path: string;
  /** The field's type in the reference's notation (see `TYPE_LEGEND`); `|` separates alternatives. */
  readonly type: string;
  /** Whether a sender must write it (input side) or the hub always writes it (output side). */
  readonly required: boolean;
  /** The value a left-out field takes, as JSON; `null` when it has none. */
  readonly defaultJson: string | null;
}

/**
 * Shared string types by the schema object they are: rendered by name, explained once in the legend. A schema that
 * is one of these by identity (also behind `nullable`, `default`, …) is written with its name.
 */
const NAMED_TYPES = new Map<unknown, string>([
  [IdSchema, 'id'],
  [TimestampSchema, 'timestamp'],
  [DurationSchema, 'duration'],
  [UserPublicKeySchema, 'nkey user public key'],
]);

/** What each name of `NAMED_TYPES` means on the wire, for the reference's legend. */
export const TYPE_LEGEND: readonly (readonly [string, string])[] = [
  ['id', 'a string of 1–128 characters of `[A-Za-z0-9_-]` (ids travel inside NATS subjects)'],
  ['timestamp', 'an ISO-8601 date and time with an offset, as a string: `2026-01-01T00:00:00.000Z`'],
  [
    'duration',
    'seconds as an integer, or a string `"<n>s"`, `"<n>m"`, `"<n>h"`, `"<n>d"` or a bare integer string; at most 365 days',
  ],
  ['nkey user public key', 'the public key of an nkey user pair: `U` and 55 base32 characters'],
  [
    '[Passport](../Passport.schema.json), …',
    'a wire type, linked to its JSON Schema; protocol.md describes its fields',
  ],
  ['object (string → T)', 'a JSON object whose keys are any strings and whose values are of type T'],
  ['any JSON value', 'anything JSON can hold'],
];

/** The wire types by schema object, linked from the reference (which lives in `docs/schemas/rpc/`). */
const WIRE_TYPES = new Map<unknown, string>(
  Object.entries(WIRE_SCHEMAS).map(([name, schema]) => [schema, `[${name}](../${name}${SCHEMA_FILE_SUFFIX})`]),
);

/** A field's schema without its wrappers, and what the wrappers said. */
interface Unwrapped {
  readonly schema: z.core.$ZodType;
  readonly nullable: boolean;
  readonly optional: boolean;
  readonly hasDefault: boolean;
  readonly defaultValue: unknown;
}

function unwrap(field: z.core.$ZodType): Unwrapped {
  let schema = field;
  let nullable = false;
  let optional = false;
  let hasDefault = false;
  let defaultValue: unknown = undefined;
  for (;;) {
    if (schema instanceof z.ZodDefault || schema instanceof z.ZodPrefault) {
      // The outermost default is the one a left-out field takes.
      if (!hasDefault) defaultValue = schema.def.defaultValue;
      hasDefault = true;
      schema = schema.def.innerType;
    } else if (schema instanceof z.ZodOptional) {
      optional = true;
      schema = schema.def.innerType;
    } else if (schema instanceof z.ZodNullable) {
      nullable = true;
      schema = schema.def.innerType;
    } else {
      return { schema, nullable, optional, hasDefault, defaultValue };
    }
  }
}

/** An object schema whose fields the reference lists itself, as rows under its field: not a named or wire type. */
function ownObject(schema: z.core.$ZodType): z.ZodObject | null {
  if (NAMED_TYPES.has(schema) || WIRE_TYPES.has(schema)) return null;
  return schema instanceof z.ZodObject && Object.keys(schema.shape).length > 0 ? schema : null;
}

/** A numeric bound worth printing: JSON Schema writes ±2^53-1 for an unbounded integer. */
function bound(value: unknown): number | null {
  return typeof value === 'number' && Math.abs(value) < Number.MAX_SAFE_INTEGER ? value : null;
}

/** `(1–256)`, `(≤ 256)`, `(≥ 1)`, or `''`: a length or count range. */
function range(min: number | null, max: number | null, unit: string): string {
  const lower = min === null || min === 0 ? null : min;
  if (lower !== null && max !== null) return ` (${lower}–${max}${unit})`;
  if (max !== null) return ` (≤ ${max}${unit})`;
  if (lower !== null) return ` (≥ ${lower}${unit})`;
  return '';
}

function numberType(schema: z.ZodNumber, side: Side): string {
  const json = z.toJSONSchema(schema, { io: side, unrepresentable: 'any' });
  const name = json.type === 'integer' ? 'integer' : 'number';
  const min = bound(json.minimum);
  const max = bound(json.maximum);
  const above = bound(json.exclusiveMinimum);
  if (above !== null) return `${name} > ${above}`;
  if (min !== null && max !== null) return `${name} ${min}–${max}`;
  if (min !== null) return `${name} ≥ ${min}`;
  if (max !== null) return `${name} ≤ ${max}`;
  return name;
}

/** The type of an unwrapped schema, in the reference's notation. Throws for a schema it cannot name. */
function typeOf(schema: z.core.$ZodType, side: Side): string {
  const named = NAMED_TYPES.get(schema) ?? WIRE_TYPES.get(schema);
  if (named !== undefined) return named;
  if (schema instanceof z.ZodObject) return 'object';
  if (schema instanceof z.ZodArray) {
    const element = fieldType(schema.element, side);
    const json = z.toJSONSchema(schema, { io: side, unrepresentable: 'any' });
    const items = element.includes(' | ') ? `(${element})[]` : `${element}[]`;
    return `${items}${range(bound(json.minItems), bound(json.maxItems), ' items')}`;
  }
  if (schema instanceof z.ZodRecord) {
    const value = unwrap(schema.valueType);
    return value.schema instanceof z.ZodUnknown ? 'object' : `object (string → ${fieldType(schema.valueType, side)})`;
  }
  if (schema instanceof z.ZodEnum) return schema.options.map((o) => JSON.stringify(o)).join(' | ');
  if (schema instanceof z.ZodLiteral) return [...schema.values].map((v) => JSON.stringify(v)).join(' | ');
  if (schema instanceof z.ZodUnion) return schema.options.map((o) => fieldType(o, side)).join(' | ');
  if (schema instanceof z.ZodString) return `string${range(schema.minLength, schema.maxLength, ' chars')}`;
  if (schema instanceof z.ZodNumber) return numberType(schema, side);
  if (schema instanceof z.ZodBoolean) return 'boolean';
  if (schema instanceof z.ZodUnknown || schema instanceof z.ZodAny) return 'any JSON value';
  throw new Error(`the operations reference has no notation for a zod ${schema._zod.def.type} schema`);
}

/** The type of a field with its wrappers: `T | null` for a nullable one. */
function fieldType(field: z.core.$ZodType, side: Side): string {
  const { schema, nullable } = unwrap(field);
  const type = typeOf(schema, side);
  return nullable ? `${type} | null` : type;
}

/**
 * The rows of an object schema's fields, in schema order, each followed by the rows of its own object (or of its
 * array's objects) when that is not a named or wire type: `credentials` then `credentials.jwt`, … An object that
 * keeps unknown keys (`z.looseObject`) ends with a `<prefix>*` row.
 */
export function fieldRows(object: z.ZodObject, side: Side, prefix = ''): FieldRow[] {
  const rows: FieldRow[] = [];
  for (const [name, field] of Object.entries<z.core.$ZodType>(object.shape)) {
    const unwrapped = unwrap(field);
    const path = `${prefix}${name}`;
    rows.push({
      path,
      type: fieldType(field, side),
      required: !unwrapped.optional && (side === 'output' || !unwrapped.hasDefault),
      defaultJson: side === 'input' && unwrapped.hasDefault ? JSON.stringify(unwrapped.defaultValue) : null,
    });
    const inner = unwrapped.schema;
    const nested = ownObject(inner) ?? (inner instanceof z.ZodArray ? ownObject(unwrap(inner.element).schema) : null);
    if (nested !== null) rows.push(...fieldRows(nested, side, inner instanceof z.ZodArray ? `${path}[].` : `${path}.`));
  }
  const { catchall } = object.def;
  if (catchall !== undefined && !(catchall instanceof z.ZodNever)) {
    rows.push({ path: `${prefix}*`, type: fieldType(catchall, side), required: false, defaultJson: null });
  }
  return rows;
}

/** The object schema an operation's request or response is; throws for one that is not an object. */
export function objectOf(schema: z.core.$ZodType, what: string): z.ZodObject {
  if (schema instanceof z.ZodObject) return schema;
  throw new Error(`${what} is not an object schema`);
}
