/**
 * Writes `docs/schemas/` from `WIRE_SCHEMAS` and `HUB_OPS`: one JSON Schema per wire type, a request and a
 * response schema per hub RPC operation under `rpc/`, READMEs, the Markdown reference of every operation
 * (`rpc/operations.md`), and removes schema files that are no longer rendered. Run with `npm run schemas`.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { OPERATIONS_REFERENCE_PATH, renderOperationsReference } from './render-operations.js';
import { renderSchemaFiles } from './render-schemas.js';
import { SCHEMAS_DIR, diffSchemaDir } from './schema-dir.js';

async function main(): Promise<void> {
  const files = new Map(renderSchemaFiles());
  files.set(OPERATIONS_REFERENCE_PATH, renderOperationsReference());
  const diff = await diffSchemaDir(SCHEMAS_DIR, files);
  const changes: string[] = [];
  const outOfDate = new Set([...diff.missing, ...diff.differs]);
  for (const [path, content] of files) {
    if (!outOfDate.has(path)) continue;
    const target = join(SCHEMAS_DIR, path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, content, 'utf8');
    changes.push(`wrote ${path}`);
  }
  for (const path of diff.extra) {
    await rm(join(SCHEMAS_DIR, path));
    changes.push(`removed stale ${path}`);
  }
  for (const change of changes) console.log(change);
  console.log(`docs/schemas: ${files.size} files, ${changes.length} changed`);
}

await main();
