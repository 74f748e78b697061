import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { reloadableFile, type ReloadableFile } from './reloadable-file.js';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ag2net-reloadable-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A file of names (a JSON array) holding `initial`, whose parse refuses anything but an array of strings. */
function namesFile(path: string, initial: string[], seen: string[][] = []): ReloadableFile<string[]> {
  return reloadableFile({
    path,
    initial,
    parse: (text) => {
      const json: unknown = JSON.parse(text);
      if (!Array.isArray(json) || !json.every((n) => typeof n === 'string')) throw new Error('expected names');
      return json;
    },
    onReload: (names) => void seen.push(names),
    describe: { kind: 'names file', held: 'names', reloaded: (names) => [{ names: names.length }, 'names reloaded'] },
  });
}

describe('reloadableFile', () => {
  it('reloads a new value, keeps the last good one through a broken version, and reports each failure once', async () => {
    const path = join(dir, 'names.json');
    await writeFile(path, '["ann"]');
    const seen: string[][] = [];
    const file = namesFile(path, ['ann'], seen);
    expect(await file.reload()).toEqual({ outcome: 'unchanged' });
    // The same value in other text is no change either.
    await writeFile(path, '[ "ann" ]\n');
    expect(await file.reload()).toEqual({ outcome: 'unchanged' });

    await writeFile(path, '["ann","bo"]');
    expect(await file.reload()).toEqual({ outcome: 'reloaded' });
    expect([file.value, seen]).toEqual([['ann', 'bo'], [['ann', 'bo']]]);

    await writeFile(path, '[1]');
    expect(await file.reload()).toEqual({ outcome: 'kept', reason: 'expected names' });
    expect(await file.reload()).toEqual({ outcome: 'unchanged' });
    await rm(path);
    expect(await file.reload()).toEqual({
      outcome: 'kept',
      reason: `ENOENT: no such file or directory, open '${path}'`,
    });
    expect(file.value).toEqual(['ann', 'bo']);

    await writeFile(path, '["cy"]');
    expect(await file.reload()).toEqual({ outcome: 'reloaded' });
    expect([file.value, seen.length]).toEqual([['cy'], 2]);
  });

  it('follows a file replaced by a rename while watched: one info line per value, one warning per failure', async () => {
    const path = join(dir, 'names.json');
    await writeFile(path, '["ann"]');
    const file = namesFile(path, ['ann']);
    const lines: [string, object, string | undefined][] = [];
    using _watching = file.watch(
      {
        info: (obj, msg) => void lines.push(['info', obj, msg]),
        warn: (obj, msg) => void lines.push(['warn', obj, msg]),
      },
      { debounceMs: 10 },
    );
    // Each version written as a whole, renamed over the file: no read sees half of one.
    const replace = async (text: string): Promise<void> => {
      await writeFile(`${path}.next`, text);
      await rename(`${path}.next`, path);
    };
    await replace('["ann","bo"]');
    await vi.waitFor(() => expect(lines).toHaveLength(1));
    expect([file.value, lines]).toEqual([['ann', 'bo'], [['info', { file: path, names: 2 }, 'names reloaded']]]);

    await replace('{}');
    await vi.waitFor(() => expect(lines).toHaveLength(2));
    // Broken the same way again, then good: no second warning.
    await replace('{ }');
    await replace('["cy"]');
    await vi.waitFor(() => expect(file.value).toEqual(['cy']));
    await vi.waitFor(() => expect(lines).toHaveLength(3));
    expect(lines.slice(1)).toEqual([
      [
        'warn',
        { file: path, reason: 'expected names' },
        `${path} is not a valid names file; keeping the previous names`,
      ],
      ['info', { file: path, names: 1 }, 'names reloaded'],
    ]);
  });
});
