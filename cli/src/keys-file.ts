import { chmod, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { ErrorCode } from '@ag2net/protocol';
import { CliError } from './exit.js';

/** An API keys file as hub-service (`api-keys.json`) and the bridge (`bridge-people.json`) read it: name → key. */
export const ApiKeysFileSchema = z.record(z.string().min(1).max(128), z.string().min(1).max(1024));

/** The keys of an API keys file; `null` when there is no such file. A malformed file is an error naming it. */
export async function readApiKeysFile(path: string): Promise<Record<string, string> | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return null;
    throw new CliError(
      `cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`,
      ErrorCode.InvalidConfig,
      {
        cause: err,
      },
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new CliError(`${path} is not JSON`, ErrorCode.InvalidConfig, { cause: err, hint: 'fix or remove the file' });
  }
  const parsed = ApiKeysFileSchema.safeParse(json);
  if (!parsed.success) {
    throw new CliError(`${path} does not map names to keys ({ "<name>": "<key>" })`, ErrorCode.InvalidConfig, {
      hint: 'fix or remove the file',
    });
  }
  // Without a prototype: a name such as `constructor` is a name like any other.
  return Object.assign(Object.create(null) as Record<string, string>, parsed.data);
}

/**
 * Writes an API keys file owner-only (0600) in one step: the new text goes to a file beside it, which is then renamed
 * over it, so that a service watching the file never reads half of it.
 */
export async function writeApiKeysFile(path: string, keys: Readonly<Record<string, string>>): Promise<void> {
  const next = `${path}.${process.pid}.next`;
  try {
    await writeFile(next, `${JSON.stringify({ ...keys }, null, 2)}\n`, { mode: 0o600 });
    await chmod(next, 0o600);
    await rename(next, path);
  } catch (err) {
    await rm(next, { force: true });
    throw err;
  }
}
