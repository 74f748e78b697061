import { z } from 'zod';

/** Base of every schema's `$id`; the rest is the file's path under `docs/schemas/`. */
export const SCHEMA_ID_BASE = 'https://ag2net.dev/schemas/';

/** The suffix of every generated schema file. */
export const SCHEMA_FILE_SUFFIX = '.schema.json';

/** What `renderSchemaDocument` stamps on a schema besides the body zod produces. */
export interface SchemaDocumentOptions {
  /** The file's path under `docs/schemas/`, `/`-separated (`Envelope.schema.json`, `rpc/health.request.schema.json`). */
  readonly path: string;
  readonly title: string;
  readonly description: string;
  /** `'input'` for what a sender may write (fields with a default optional), `'output'` for what a parser yields. */
  readonly io: 'input' | 'output';
  /** Passed to `z.toJSONSchema`; edits the JSON Schema of one zod schema in place. */
  readonly override?: (ctx: { zodSchema: unknown; jsonSchema: z.core.JSONSchema.BaseSchema }) => void;
}

/**
 * One JSON Schema document, pretty-printed with two spaces and a trailing newline. Types that JSON Schema cannot
 * express (transforms on the output side, bigint, …) throw rather than silently widen to `{}`.
 */
export function renderSchemaDocument(schema: z.ZodType, options: SchemaDocumentOptions): string {
  const { override } = options;
  const { $schema, ...body } = z.toJSONSchema(schema, {
    io: options.io,
    unrepresentable: 'throw',
    ...(override === undefined ? {} : { override }),
  });
  const document = {
    $schema,
    $id: `${SCHEMA_ID_BASE}${options.path}`,
    title: options.title,
    description: options.description,
    ...body,
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}
