import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { WIRE_SCHEMAS } from '@ag2net/protocol';
import { SCHEMA_FILE_SUFFIX, renderSchemaFiles } from '../scripts/render-schemas.js';

const SCHEMAS_DIR = fileURLToPath(new URL('../../../docs/schemas/', import.meta.url));
const RUN_GENERATOR = 'docs/schemas is out of date with WIRE_SCHEMAS; run `npm run schemas` and commit the result';

async function readOrMissing(name: string): Promise<string | undefined> {
  try {
    return await readFile(join(SCHEMAS_DIR, name), 'utf8');
  } catch {
    return undefined;
  }
}

describe('docs/schemas', () => {
  const rendered = renderSchemaFiles();

  it('holds every file the generator renders, byte for byte', async () => {
    const problems: string[] = [];
    for (const [name, content] of rendered) {
      const onDisk = await readOrMissing(name);
      if (onDisk === undefined) problems.push(`missing ${name}`);
      else if (onDisk !== content) problems.push(`differs ${name}`);
    }
    expect(problems, RUN_GENERATOR).toEqual([]);
  });

  it('holds no schema file for a type that is not in WIRE_SCHEMAS', async () => {
    const extra = (await readdir(SCHEMAS_DIR)).filter(
      (name) => name.endsWith(SCHEMA_FILE_SUFFIX) && !rendered.has(name),
    );
    expect(extra, RUN_GENERATOR).toEqual([]);
  });
});

describe('renderSchemaFiles', () => {
  it('renders one schema per WIRE_SCHEMAS entry plus the README', () => {
    const expected = [...Object.keys(WIRE_SCHEMAS).map((name) => `${name}${SCHEMA_FILE_SUFFIX}`), 'README.md'];
    expect([...renderSchemaFiles().keys()]).toEqual(expected);
  });

  it('renders the same bytes on every call', () => {
    expect([...renderSchemaFiles()]).toEqual([...renderSchemaFiles()]);
  });

  it('stamps $id and title and pretty-prints with two spaces and a trailing newline', () => {
    const text = renderSchemaFiles().get('Envelope.schema.json');
    expect(text).toBeDefined();
    const doc: unknown = JSON.parse(text ?? '');
    expect(doc).toMatchObject({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: 'https://ag2net.dev/schemas/Envelope.schema.json',
      title: 'Envelope',
      type: 'object',
      additionalProperties: false,
    });
    expect(text).toBe(`${JSON.stringify(doc, null, 2)}\n`);
  });

  it('describes the input side: only fields without a default are required', () => {
    const envelope: unknown = JSON.parse(renderSchemaFiles().get('Envelope.schema.json') ?? '');
    expect(envelope).toMatchObject({ required: ['channel_id', 'sender_id', 'event_type'] });
    const rule: unknown = JSON.parse(renderSchemaFiles().get('Rule.schema.json') ?? '');
    expect(rule).not.toHaveProperty('required');
  });

  it('lists every schema in the README with a link', () => {
    const readme = renderSchemaFiles().get('README.md') ?? '';
    for (const name of Object.keys(WIRE_SCHEMAS)) {
      expect(readme).toContain(`| [${name}](./${name}${SCHEMA_FILE_SUFFIX}) | `);
    }
  });
});
