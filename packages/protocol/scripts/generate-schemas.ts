/**
 * Writes `docs/schemas/` from `WIRE_SCHEMAS`: one JSON Schema per wire type and a README, and removes schema
 * files whose wire type no longer exists. Run with `npm run schemas`.
 */
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { SCHEMA_FILE_SUFFIX, renderSchemaFiles } from './render-schemas.js';

/** `docs/schemas/` of the repository root. */
export const SCHEMAS_DIR = fileURLToPath(new URL('../../../docs/schemas/', import.meta.url));

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return undefined;
    throw err;
  }
}

async function main(): Promise<void> {
  const files = renderSchemaFiles();
  await mkdir(SCHEMAS_DIR, { recursive: true });
  const changes: string[] = [];
  for (const [name, content] of files) {
    const path = join(SCHEMAS_DIR, name);
    if ((await readIfExists(path)) === content) continue;
    await writeFile(path, content, 'utf8');
    changes.push(`wrote ${name}`);
  }
  for (const name of await readdir(SCHEMAS_DIR)) {
    if (name.endsWith(SCHEMA_FILE_SUFFIX) && !files.has(name)) {
      await rm(join(SCHEMAS_DIR, name));
      changes.push(`removed stale ${name}`);
    }
  }
  for (const change of changes) console.log(change);
  console.log(`docs/schemas: ${files.size} files, ${changes.length} changed`);
}

await main();
