import { WIRE_SCHEMAS } from '../src/index.js';
import type { WireTypeName } from '../src/index.js';
import { RPC_SCHEMA_DIR, renderRpcSchemaFiles } from './render-rpc-schemas.js';
import { SCHEMA_FILE_SUFFIX, renderSchemaDocument } from './schema-document.js';

/** One line per wire type, for the schema's `description` and the README. A new wire type must add one. */
export const SCHEMA_DESCRIPTIONS = {
  Envelope: 'The unit of everything said in a channel: AG2 `Envelope` plus the hub-stamped `sequence`.',
  ChannelManifest: 'What a channel type is: adapter key (type, version), participant rules, knobs and expectations.',
  ChannelMetadata:
    "Everything the hub knows about a channel, AG2's 15 `ChannelMetadata` keys, and `expired_at` once its history expired.",
  Participant: 'A member of a channel with its role and turn order.',
  Expectation: 'A time or policy promise the hub checks for a channel, and what to do on violation.',
  Passport: 'Who an agent is: name, owner, model, auth block and kind.',
  Resume: 'What an agent claims to do and what the hub observed it do.',
  Rule: "An agent's access globs and limits, enforced by the hub's arbiter.",
  TaskMetadata: "The hub's record of a task: spec, state and timestamps.",
  Handoff: 'A tool result that hands the workflow turn to another agent.',
  Finish: 'A tool result that ends the workflow.',
  WireError: 'An error as an RPC response carries it: stable `code`, message and details.',
  TextData: '`event_data` of `ag2.msg.text`.',
  PacketData: '`event_data` of `ag2.packet`: routing, context updates and body.',
  InviteData: '`event_data` of `ag2.channel.invite`.',
  InviteRejectData: '`event_data` of `ag2.channel.invite.reject`.',
  ChannelRefData: '`event_data` of `ag2.channel.invite.ack` and `ag2.channel.opened`.',
  ChannelEndData: '`event_data` of `ag2.channel.closed` and `ag2.channel.expired`.',
  ExpectationViolatedData: '`event_data` of `ag2.expectation.violated`.',
  ViolationRecord:
    "`event_data` of the hub's `ag2.expectation.violated` and its `expectation_violated` audit record: AG2's fields plus handler, params, index and scope.",
  ContextSetData: '`event_data` of `ag2.context.set`: context variables to set and delete.',
  TaskCancelData: '`event_data` of `ag2.task.cancel_request` and `ag2.task.cancelled`.',
  TurnFailedData: '`event_data` of `ag2.turn.failed`: which agent could not take its turn, and why.',
} as const satisfies Readonly<Record<WireTypeName, string>>;

/** The file name of a wire type's JSON Schema. */
export function schemaFileName(name: string): string {
  return `${name}${SCHEMA_FILE_SUFFIX}`;
}

function isDescribed(name: string): name is WireTypeName {
  return Object.hasOwn(SCHEMA_DESCRIPTIONS, name);
}

/** The wire type names in `WIRE_SCHEMAS` order; throws when one has no description (tsx does not typecheck). */
function wireTypeNames(): WireTypeName[] {
  const names = Object.keys(WIRE_SCHEMAS);
  const missing = names.filter((name) => !isDescribed(name));
  if (missing.length > 0) throw new Error(`SCHEMA_DESCRIPTIONS has no line for ${missing.join(', ')}`);
  return names.filter(isDescribed);
}

/** The JSON Schema document of one wire type: what a sender may write (`io: 'input'`, defaults optional). */
export function renderSchema(name: WireTypeName): string {
  return renderSchemaDocument(WIRE_SCHEMAS[name], {
    path: schemaFileName(name),
    title: name,
    description: SCHEMA_DESCRIPTIONS[name],
    io: 'input',
  });
}

function renderReadme(names: readonly WireTypeName[]): string {
  const rows = names.map((name) => `| [${name}](./${schemaFileName(name)}) | ${SCHEMA_DESCRIPTIONS[name]} |`);
  return [
    '# Wire schemas',
    '',
    'JSON Schema (draft 2020-12) of every ag2net wire type, generated from the zod schemas in',
    '`packages/protocol/src` (`WIRE_SCHEMAS`). They describe what a sender may write: fields with a default',
    'are optional. Do not edit these files; change the zod schema and run `npm run schemas`.',
    '',
    '| Schema | Description |',
    '|---|---|',
    ...rows,
    '',
    `The request and response of every hub RPC operation are in [${RPC_SCHEMA_DIR}/](./${RPC_SCHEMA_DIR}/README.md).`,
    '',
  ].join('\n');
}

/**
 * Everything `docs/schemas/` holds, path under it (`/`-separated) → content: one `<Name>.schema.json` per entry
 * of `WIRE_SCHEMAS` and a `README.md` listing them, then `rpc/` (see `renderRpcSchemaFiles`). Pure and
 * deterministic, so a test can compare it with the files on disk.
 */
export function renderSchemaFiles(): ReadonlyMap<string, string> {
  const names = wireTypeNames();
  const files = new Map<string, string>();
  for (const name of names) files.set(schemaFileName(name), renderSchema(name));
  files.set('README.md', renderReadme(names));
  for (const [path, content] of renderRpcSchemaFiles()) files.set(path, content);
  return files;
}
