import { HUB_OPS, HUB_OP_NAMES, type HubOp } from '../src/index.js';
import { TYPE_LEGEND, fieldRows, objectOf, type FieldRow, type Side } from './field-rows.js';
import { COMMON_REQUEST_FIELDS, COMMON_RESULT_FIELDS, OPERATION_DOCS, type OperationDoc } from './operation-docs.js';
import {
  OPERATIONS_REFERENCE_FILE,
  RPC_REPLY_FILE_NAME,
  RPC_SCHEMA_DIR,
  rpcSchemaFileName,
  rpcSubjectPattern,
} from './render-rpc-schemas.js';

/** Where the operations reference is, under `docs/schemas/`. */
export const OPERATIONS_REFERENCE_PATH = `${RPC_SCHEMA_DIR}/${OPERATIONS_REFERENCE_FILE}`;

/** What the reference is rendered from; the defaults are the project's, a test may pass its own. */
export interface OperationsReferenceSource {
  readonly docs?: { readonly [Op in HubOp]: OperationDoc };
  readonly commonRequest?: Readonly<Record<string, string>>;
  readonly commonResult?: Readonly<Record<string, string>>;
}

/** A Markdown table cell: `|` would end it, a line break would end the row. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

function code(text: string): string {
  return `\`${text}\``;
}

/** `262,144 bytes (256 KiB)`. */
function bytes(n: number): string {
  return `${n.toLocaleString('en-US')} bytes (${n / 1024} KiB)`;
}

/**
 * The description of each row, from the operation's own entry or the common ones. Throws for a row without one and
 * for an entry that names no row, so that a field added to or removed from a schema fails the generator.
 */
function described(
  rows: readonly FieldRow[],
  source: {
    readonly op: HubOp;
    readonly side: 'request' | 'result';
    readonly own: Readonly<Record<string, string>>;
    readonly common: Readonly<Record<string, string>>;
  },
): string[] {
  const { op, side } = source;
  const paths = new Set(rows.map((r) => r.path));
  const stale = Object.keys(source.own).filter((path) => !paths.has(path));
  if (stale.length > 0) {
    throw new Error(`operation-docs.ts describes ${op} ${side} fields that do not exist: ${stale.join(', ')}`);
  }
  return rows.map((row) => {
    const text = source.own[row.path] ?? source.common[row.path];
    if (text === undefined) {
      throw new Error(`operation-docs.ts has no description of the ${op} ${side} field ${row.path}`);
    }
    return text;
  });
}

function requestTable(op: HubOp, rows: readonly FieldRow[], texts: readonly string[]): string[] {
  const link = `[JSON Schema](./${rpcSchemaFileName(op, 'request')})`;
  if (rows.length === 0) return [`**Request** (${link}): \`{}\`. It has no fields; any field is \`invalid_request\`.`];
  return [
    `**Request** (${link}):`,
    '',
    '| field | type | required | default | description |',
    '|---|---|---|---|---|',
    ...rows.map(
      (row, i) =>
        `| ${code(row.path)} | ${cell(row.type)} | ${row.required ? 'yes' : 'no'} | ` +
        `${row.defaultJson === null ? '' : cell(code(row.defaultJson))} | ${cell(texts[i] ?? '')} |`,
    ),
  ];
}

function resultTable(op: HubOp, rows: readonly FieldRow[], texts: readonly string[]): string[] {
  const link = `[JSON Schema](./${rpcSchemaFileName(op, 'response')})`;
  if (rows.length === 0) return [`**Result** (${link}): \`{}\`.`];
  return [
    `**Result** (${link}):`,
    '',
    '| field | type | description |',
    '|---|---|---|',
    ...rows.map((row, i) => `| ${code(row.path)} | ${cell(row.type)} | ${cell(texts[i] ?? '')} |`),
  ];
}

/** One operation's section: heading, what it is, and its request and result tables. */
function renderOperation(op: HubOp, source: Required<OperationsReferenceSource>): string[] {
  const spec = HUB_OPS[op];
  const doc = source.docs[op];
  const rowsOf = (side: Side): FieldRow[] =>
    fieldRows(objectOf(side === 'input' ? spec.request : spec.response, `${op} ${side}`), side);
  const request = rowsOf('input');
  const result = rowsOf('output');
  const facts = [
    code(rpcSubjectPattern(op)),
    `access ${code(spec.access)}${spec.operatorReads && spec.access !== 'operator' ? ', and the operator' : ''}`,
    spec.idempotent ? 'idempotent' : '**not idempotent**',
    `request at most ${bytes(spec.maxRequestBytes)}`,
  ];
  return [
    `### ${code(op)}`,
    '',
    facts.join(' · '),
    '',
    doc.summary,
    '',
    ...requestTable(
      op,
      request,
      described(request, { op, side: 'request', own: doc.request ?? {}, common: source.commonRequest }),
    ),
    '',
    ...resultTable(
      op,
      result,
      described(result, { op, side: 'result', own: doc.result ?? {}, common: source.commonResult }),
    ),
    '',
  ];
}

function renderIndex(): string[] {
  return [
    '| operation | caller in subject | access | operator | idempotent | max request bytes |',
    '|---|---|---|---|---|---|',
    ...HUB_OP_NAMES.map((op) => {
      const spec = HUB_OPS[op];
      return (
        `| [${op}](#${op.toLowerCase()}) | ${spec.caller ? 'yes' : 'no'} | ${code(spec.access)} | ` +
        `${spec.operatorReads ? 'yes' : 'no'} | ${spec.idempotent ? 'yes' : 'no'} | ${spec.maxRequestBytes.toLocaleString('en-US')} |`
      );
    }),
  ];
}

/**
 * The Markdown reference of every hub operation, in `HUB_OP_NAMES` order: subject, access class, whether the
 * operator may call it, whether it is idempotent, the largest request, and each request field (type, required,
 * default, description) and result field (type, description). Types come from the zod schemas of `HUB_OPS`,
 * descriptions from `operation-docs.ts`. Pure and deterministic.
 */
export function renderOperationsReference(source: OperationsReferenceSource = {}): string {
  const full: Required<OperationsReferenceSource> = {
    docs: source.docs ?? OPERATION_DOCS,
    commonRequest: source.commonRequest ?? COMMON_REQUEST_FIELDS,
    commonResult: source.commonResult ?? COMMON_RESULT_FIELDS,
  };
  return [
    '# Hub operations',
    '',
    '<!-- Generated by `npm run schemas` from HUB_OPS (packages/protocol/src/rpc/ops.ts) and',
    '     packages/protocol/scripts/operation-docs.ts. Do not edit: a test fails when this file is stale. -->',
    '',
    'Every operation of the hub, with the shape of its request and of its result. How to call one is in',
    "[protocol.md](../../protocol.md#rpc): a NATS request on the subject below (`<prefix>` is the hub's prefix,",
    "`ag2` by default; `<caller_id>` is the calling identity's agent id, or `$operator`) whose body is the request",
    `as JSON; the answer is an [RpcReply](./${RPC_REPLY_FILE_NAME}), \`{ "ok": true, "result": … }\` with the result`,
    'below, or `{ "ok": false, "error": { "code", "message", "details"? } }`. Who may call an operation is its access',
    'class ([Access classes](../../protocol.md#access-classes)); "and the operator" marks the reads the operator',
    'caller may make too. An idempotent operation may be sent again after a timeout; one that is not idempotent is',
    'sent again only when no hub got it ([Timeouts and retries](../../protocol.md#timeouts-and-retries)). A request',
    'larger than its limit is `invalid_request` before it is read. Request fields that are not required may be left',
    'out and take their default; an unknown field is `invalid_request`. Result fields are always present.',
    '',
    'Types:',
    '',
    '| type | on the wire |',
    '|---|---|',
    ...TYPE_LEGEND.map(([name, meaning]) => `| ${cell(name.startsWith('[') ? name : code(name))} | ${cell(meaning)} |`),
    '',
    'Integers and numbers are JSON numbers; a range such as `integer 1–1000` is inclusive. `T | null` may be `null`;',
    "`(≤ 256 chars)` bounds a string's length, `(≤ 256 items)` an array's.",
    '',
    '## Index',
    '',
    ...renderIndex(),
    '',
    '## Operations',
    '',
    ...HUB_OP_NAMES.flatMap((op) => renderOperation(op, full)),
  ].join('\n');
}
