import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HUB_OPS, HUB_OP_NAMES, IdSchema, PassportSchema, TimestampSchema, type HubOp } from '@ag2net/protocol';
import { fieldRows } from '../scripts/field-rows.js';
import { OPERATION_DOCS } from '../scripts/operation-docs.js';
import { OPERATIONS_REFERENCE_PATH, renderOperationsReference } from '../scripts/render-operations.js';
import { SCHEMAS_DIR } from '../scripts/schema-dir.js';

const RUN_GENERATOR =
  'docs/schemas/rpc/operations.md is out of date with HUB_OPS or operation-docs.ts; run `npm run schemas` and commit it';
const DOCS = fileURLToPath(new URL('../../../docs/', import.meta.url));

/** The section of `op` in the rendered reference: from its heading to the next one. */
function sectionOf(reference: string, op: HubOp): string {
  const start = reference.indexOf(`### \`${op}\`\n`);
  expect(start, `a section for ${op}`).toBeGreaterThanOrEqual(0);
  const end = reference.indexOf('\n### ', start + 1);
  return reference.slice(start, end === -1 ? undefined : end);
}

describe('docs/schemas/rpc/operations.md', () => {
  const rendered = renderOperationsReference();

  it('is what the generator renders from HUB_OPS, byte for byte', async () => {
    const onDisk = await readFile(join(SCHEMAS_DIR, OPERATIONS_REFERENCE_PATH), 'utf8').catch(() => '');
    expect(onDisk === rendered, RUN_GENERATOR).toBe(true);
  });

  // Reads the zod shapes without the renderer's row walk, so a field the renderer skipped still fails here.
  it('has a section for every operation with its subject and a row for every top-level request and result field', () => {
    const missing: string[] = [];
    for (const op of HUB_OP_NAMES) {
      const section = sectionOf(rendered, op);
      const subject = HUB_OPS[op].caller ? `<prefix>.hub.v1.${op}.<caller_id>` : `<prefix>.hub.v1.${op}`;
      if (!section.includes(`\`${subject}\``)) missing.push(`${op}: subject`);
      for (const side of ['request', 'response'] as const) {
        const schema = HUB_OPS[op][side];
        const fields = schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
        for (const field of fields) if (!section.includes(`| \`${field}\` |`)) missing.push(`${op} ${side}: ${field}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('states each operation’s access class, idempotence and request limit as HUB_OPS declares them', () => {
    for (const op of HUB_OP_NAMES) {
      const spec = HUB_OPS[op];
      const row = rendered.split('\n').find((line) => line.startsWith(`| [${op}](#${op.toLowerCase()}) |`));
      expect(row, op).toBe(
        `| [${op}](#${op.toLowerCase()}) | ${spec.caller ? 'yes' : 'no'} | \`${spec.access}\` | ` +
          `${spec.operatorReads ? 'yes' : 'no'} | ${spec.idempotent ? 'yes' : 'no'} | ` +
          `${spec.maxRequestBytes.toLocaleString('en-US')} |`,
      );
    }
  });

  it('spells out the credentials a register answers, expires_at as an ISO-8601 timestamp', () => {
    const register = sectionOf(rendered, 'register');
    expect(register).toContain('| `public_key` | nkey user public key \\| null | no | `null` |');
    expect(register).toContain('| `credentials.expires_at` | timestamp | When NATS stops accepting the JWT');
    expect(rendered).toContain('| `timestamp` | an ISO-8601 date and time with an offset, as a string');
  });

  it('is named operation by operation in docs/protocol.md’s list of what each is for', async () => {
    const protocol = await readFile(join(DOCS, 'protocol.md'), 'utf8');
    const rpc = protocol.slice(protocol.indexOf('\n## RPC\n'), protocol.indexOf('\n### Limits and paging\n'));
    const listed = new Set([...rpc.matchAll(/`(\w+)\*?`/g)].map((m) => m[1]));
    expect(HUB_OP_NAMES.filter((op) => !listed.has(op))).toEqual([]);
    // A `*` marks exactly the operations whose subject carries the caller.
    const starred = new Set([...rpc.matchAll(/`(\w+)\*`/g)].map((m) => m[1]));
    expect([...starred].sort()).toEqual(HUB_OP_NAMES.filter((op) => HUB_OPS[op].caller).sort());
  });

  it('is linked from docs/protocol.md and from the rpc schemas README', async () => {
    const protocol = await readFile(join(DOCS, 'protocol.md'), 'utf8');
    expect(protocol).toContain('](schemas/rpc/operations.md');
    const readme = await readFile(join(SCHEMAS_DIR, 'rpc/README.md'), 'utf8');
    expect(readme).toContain('[operations.md](./operations.md)');
  });
});

describe('renderOperationsReference', () => {
  it('refuses a field without a description, naming the operation and the field', () => {
    const { request: _request, ...withoutRequest } = OPERATION_DOCS.findAgentId;
    const docs = { ...OPERATION_DOCS, findAgentId: withoutRequest };
    expect(() => renderOperationsReference({ docs })).toThrow(
      'operation-docs.ts has no description of the findAgentId request field name',
    );
  });

  it('refuses a description of a field the operation does not have', () => {
    const docs = { ...OPERATION_DOCS, health: { ...OPERATION_DOCS.health, request: { verbose: 'More detail.' } } };
    expect(() => renderOperationsReference({ docs })).toThrow(
      'operation-docs.ts describes health request fields that do not exist: verbose',
    );
  });
});

describe('fieldRows', () => {
  const schema = z.strictObject({
    id: IdSchema.nullable().default(null),
    who: PassportSchema,
    turns: z.array(z.strictObject({ at: TimestampSchema, n: z.number().int().min(1).max(10).default(5) })).max(3),
    note: z.string().min(1).max(64).optional(),
    map: z.record(z.string(), z.string()).default({}),
    kind: z.enum(['a', 'b']),
  });

  it('writes a sender’s view: types, what may be left out and its default, nested objects row by row', () => {
    expect(fieldRows(schema, 'input')).toEqual([
      { path: 'id', type: 'id | null', required: false, defaultJson: 'null' },
      { path: 'who', type: '[Passport](../Passport.schema.json)', required: true, defaultJson: null },
      { path: 'turns', type: 'object[] (≤ 3 items)', required: true, defaultJson: null },
      { path: 'turns[].at', type: 'timestamp', required: true, defaultJson: null },
      { path: 'turns[].n', type: 'integer 1–10', required: false, defaultJson: '5' },
      { path: 'note', type: 'string (1–64 chars)', required: false, defaultJson: null },
      { path: 'map', type: 'object (string → string)', required: false, defaultJson: '{}' },
      { path: 'kind', type: '"a" | "b"', required: true, defaultJson: null },
    ]);
  });

  it('writes the hub’s view: every defaulted field present, no defaults; a loose object ends with its other keys', () => {
    const loose = z.looseObject({ id: z.string().min(1) });
    expect(fieldRows(schema, 'output').map((r) => [r.path, r.required, r.defaultJson])).toEqual([
      ['id', true, null],
      ['who', true, null],
      ['turns', true, null],
      ['turns[].at', true, null],
      ['turns[].n', true, null],
      ['note', false, null],
      ['map', true, null],
      ['kind', true, null],
    ]);
    expect(fieldRows(z.strictObject({ records: z.array(loose) }), 'output').map((r) => r.path)).toEqual([
      'records',
      'records[].id',
      'records[].*',
    ]);
  });
});
