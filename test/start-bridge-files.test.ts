import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  BRIDGE_PEOPLE_FILE,
  BRIDGE_SECRET_FILE,
  OPERATOR_KEY_FILE,
  prepareBridgeFiles,
} from '../scripts/stack/bridge.js';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ag2net-bridge-files-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const people = async (): Promise<unknown> => JSON.parse(await readFile(join(dir, BRIDGE_PEOPLE_FILE), 'utf8'));
const mode = async (file: string): Promise<number> => (await stat(join(dir, file))).mode & 0o777;

describe("npm start's bridge files", () => {
  it('keep the people `ag2net people add` admitted, and set the demo person to the key the hub admits it with', async () => {
    const first = await prepareBridgeFiles({ dir, personKey: 'k-you-1' });
    expect(await people()).toEqual({ you: 'k-you-1' });
    // `ag2net people add alice` writes her key beside the demo person's.
    await writeFile(join(dir, BRIDGE_PEOPLE_FILE), JSON.stringify({ you: 'k-you-1', alice: 'k-alice' }), {
      mode: 0o644,
    });

    const again = await prepareBridgeFiles({ dir, personKey: 'k-you-1' });
    expect(await people()).toEqual({ you: 'k-you-1', alice: 'k-alice' });
    expect([again.personKey, again.personSeed]).toEqual(['k-you-1', first.personSeed]);
    // A new key of the demo person (a new api-keys.json) replaces its entry only.
    await prepareBridgeFiles({ dir, personKey: 'k-you-2' });
    expect(await people()).toEqual({ you: 'k-you-2', alice: 'k-alice' });
    for (const file of [BRIDGE_PEOPLE_FILE, BRIDGE_SECRET_FILE, OPERATOR_KEY_FILE])
      expect(await mode(file)).toBe(0o600);
    // Written in one step: nothing is left beside it.
    expect((await readdir(dir)).sort()).toEqual([BRIDGE_PEOPLE_FILE, BRIDGE_SECRET_FILE, OPERATOR_KEY_FILE].sort());
  });

  it('on an insecure stack give the demo person a random key once, and keep it and the others after', async () => {
    const first = await prepareBridgeFiles({ dir, personKey: null });
    expect(first.personKey).toMatch(/^[A-Za-z0-9_-]{32}$/);
    await writeFile(join(dir, BRIDGE_PEOPLE_FILE), JSON.stringify({ bob: 'k-bob', you: first.personKey }));
    const again = await prepareBridgeFiles({ dir, personKey: null });
    expect(again.personKey).toBe(first.personKey);
    expect(await people()).toEqual({ bob: 'k-bob', you: first.personKey });
    expect(await mode(BRIDGE_PEOPLE_FILE)).toBe(0o600);
  });

  it('refuse a people file that is not one, naming it, and leave it as it is', async () => {
    const file = join(dir, BRIDGE_PEOPLE_FILE);
    await writeFile(file, '{ "alice": ');
    await expect(prepareBridgeFiles({ dir, personKey: 'k-you' })).rejects.toThrow(
      `${file} does not map names to keys ({ "<name>": "<key>" }); fix or remove it`,
    );
    expect(await readFile(file, 'utf8')).toBe('{ "alice": ');
  });
});
