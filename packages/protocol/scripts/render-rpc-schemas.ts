import { HUB_OPS, HUB_OP_NAMES, RpcReplySchema } from '../src/index.js';
import { RPC_VERSION } from '../src/rpc/subjects.js';
import type { HubOp } from '../src/index.js';
import { SCHEMA_FILE_SUFFIX, renderSchemaDocument } from './schema-document.js';

/** The folder under `docs/schemas/` that holds the RPC schemas. */
export const RPC_SCHEMA_DIR = 'rpc';

/** The file name (inside `rpc/`) of the Markdown reference of every operation (`render-operations.ts`). */
export const OPERATIONS_REFERENCE_FILE = 'operations.md';

/** The file name of the RPC reply wrapper's schema. */
export const RPC_REPLY_FILE_NAME = `RpcReply${SCHEMA_FILE_SUFFIX}`;

/** Which half of an operation a schema describes. */
export type RpcSide = 'request' | 'response';

/** The file name (inside `rpc/`) of one side of an operation: `<op>.request.schema.json`. */
export function rpcSchemaFileName(op: HubOp, side: RpcSide): string {
  return `${op}.${side}${SCHEMA_FILE_SUFFIX}`;
}

/** The subject an operation is called on, with placeholders: `<prefix>.hub.v1.<op>[.<caller_id>]`. */
export function rpcSubjectPattern(op: HubOp): string {
  const subject = `<prefix>.hub.${RPC_VERSION}.${op}`;
  return HUB_OPS[op].caller ? `${subject}.<caller_id>` : subject;
}

function titleOf(op: HubOp, side: RpcSide): string {
  const capitalized = (word: string): string => `${word.charAt(0).toUpperCase()}${word.slice(1)}`;
  return `${capitalized(op)}${capitalized(side)}`;
}

function descriptionOf(op: HubOp, side: RpcSide): string {
  const subject = rpcSubjectPattern(op);
  return side === 'request'
    ? `Request of the hub RPC \`${op}\`, sent on \`${subject}\`. Fields with a default may be omitted.`
    : `Response of the hub RPC \`${op}\`: the \`result\` of an \`ok\` RpcReply to \`${subject}\`.`;
}

/**
 * A request is what a client may write (`io: 'input'`: fields with a default are optional); a response is what
 * the hub writes after its defaults are applied (`io: 'output'`: every field is present).
 */
function renderOpSchema(op: HubOp, side: RpcSide): string {
  return renderSchemaDocument(HUB_OPS[op][side], {
    path: `${RPC_SCHEMA_DIR}/${rpcSchemaFileName(op, side)}`,
    title: titleOf(op, side),
    description: descriptionOf(op, side),
    io: side === 'request' ? 'input' : 'output',
  });
}

/** The `z.unknown()` that `result` is in `RpcReplySchema`, found by identity so the override touches nothing else. */
const REPLY_RESULT = RpcReplySchema.options[0].shape.result;

/**
 * `RpcReplySchema` leaves `result` as `z.unknown()`, which zod renders as `{}` (any JSON value): the wrapper does
 * not know the operation, and the client validates `result` against the operation's response schema. That is the
 * faithful rendering, so it is kept; the override only says where the real shape is. (zod 4 treats an unknown key
 * as required, so `result` is in `required` as it is at runtime.)
 */
function renderReplySchema(): string {
  return renderSchemaDocument(RpcReplySchema, {
    path: `${RPC_SCHEMA_DIR}/${RPC_REPLY_FILE_NAME}`,
    title: 'RpcReply',
    description:
      'Every hub RPC reply: `{ "ok": true, "result": … }` with the operation\'s response, or ' +
      '`{ "ok": false, "error": … }` with a WireError.',
    io: 'output',
    override: ({ zodSchema, jsonSchema }) => {
      if (zodSchema === REPLY_RESULT) {
        jsonSchema.description = "The operation's response: see `<op>.response.schema.json` for each operation.";
      }
    },
  });
}

function renderRpcReadme(): string {
  const link = (op: HubOp, side: RpcSide): string => `[${op}.${side}](./${rpcSchemaFileName(op, side)})`;
  const rows = HUB_OP_NAMES.map(
    (op) =>
      `| \`${op}\` | \`${rpcSubjectPattern(op)}\` | ${HUB_OPS[op].caller ? 'yes' : 'no'} | ` +
      `${link(op, 'request')} | ${link(op, 'response')} |`,
  );
  return [
    '# Hub RPC schemas',
    '',
    'JSON Schema (draft 2020-12) of the request and response of every hub RPC operation, generated from',
    '`HUB_OPS` in `packages/protocol/src/rpc/ops.ts`. A client sends the request as JSON with NATS',
    `request-reply on the operation's subject; the hub answers with an [RpcReply](./${RPC_REPLY_FILE_NAME}) whose`,
    "`result`, when `ok` is true, is the operation's response. Request schemas describe what a client may write",
    '(fields with a default are optional); response schemas describe what the hub writes, with defaults applied',
    '(fields with a default are always present).',
    "Where the caller is in the subject, `<caller_id>` is the calling agent's id, so that NATS permissions can",
    'pin a connection to its identity. Do not edit these files; change the zod schema and run `npm run schemas`.',
    '',
    `Every operation's request and result fields, with their types, defaults and meaning, are described in`,
    `[${OPERATIONS_REFERENCE_FILE}](./${OPERATIONS_REFERENCE_FILE}).`,
    '',
    '| Operation | Subject | Caller in subject | Request | Response |',
    '|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

/**
 * Everything `docs/schemas/rpc/` holds, path under `docs/schemas/` → content: `<op>.request.schema.json` and
 * `<op>.response.schema.json` per entry of `HUB_OPS` (in `HUB_OP_NAMES` order), `RpcReply.schema.json` and a
 * `README.md` table. Pure and deterministic.
 */
export function renderRpcSchemaFiles(): ReadonlyMap<string, string> {
  const files = new Map<string, string>();
  for (const op of HUB_OP_NAMES) {
    for (const side of ['request', 'response'] as const) {
      files.set(`${RPC_SCHEMA_DIR}/${rpcSchemaFileName(op, side)}`, renderOpSchema(op, side));
    }
  }
  files.set(`${RPC_SCHEMA_DIR}/${RPC_REPLY_FILE_NAME}`, renderReplySchema());
  files.set(`${RPC_SCHEMA_DIR}/README.md`, renderRpcReadme());
  return files;
}
