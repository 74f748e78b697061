import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RPC_SCHEMA_DIR } from './render-rpc-schemas.js';
import { SCHEMA_FILE_SUFFIX } from './schema-document.js';

/** `docs/schemas/` of the repository root. */
export const SCHEMAS_DIR = fileURLToPath(new URL('../../../docs/schemas/', import.meta.url));

/** The folders under `docs/schemas/` that hold generated schemas (`''` is the root); each is checked for stale files. */
export const SCHEMA_SUBDIRS = ['', RPC_SCHEMA_DIR] as const;

/** How a schema folder differs from what the generator renders; paths are `/`-separated, relative to the folder. */
export interface SchemaDirDiff {
  /** Rendered files that are not on disk. */
  readonly missing: readonly string[];
  /** Rendered files whose bytes on disk differ. */
  readonly differs: readonly string[];
  /** `*.schema.json` files on disk, in a folder of `SCHEMA_SUBDIRS`, that the generator no longer renders. */
  readonly extra: readonly string[];
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return undefined;
    throw err;
  }
}

async function listSchemaFiles(dir: string, subdir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(join(dir, subdir));
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return [];
    throw err;
  }
  return names
    .filter((name) => name.endsWith(SCHEMA_FILE_SUFFIX))
    .sort()
    .map((name) => (subdir === '' ? name : `${subdir}/${name}`));
}

/** Compares `dir` (normally `SCHEMAS_DIR`) with `rendered` (path → content, as `renderSchemaFiles` returns). */
export async function diffSchemaDir(dir: string, rendered: ReadonlyMap<string, string>): Promise<SchemaDirDiff> {
  const missing: string[] = [];
  const differs: string[] = [];
  for (const [path, content] of rendered) {
    const onDisk = await readIfExists(join(dir, path));
    if (onDisk === undefined) missing.push(path);
    else if (onDisk !== content) differs.push(path);
  }
  const extra: string[] = [];
  for (const subdir of SCHEMA_SUBDIRS) {
    for (const path of await listSchemaFiles(dir, subdir)) if (!rendered.has(path)) extra.push(path);
  }
  return { missing, differs, extra };
}
