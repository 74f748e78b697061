import { waitFor } from '@ag2net/test-support';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, bridgeOptionsOf, loadConfig, watchPeopleFile } from './config.js';

describe('bridge config', () => {
  it('reads flags over the environment and takes defaults', () => {
    const config = loadConfig(['--port', '9000', '--anonymous-read'], { AG2NET_PREFIX: 'p1', AG2NET_BRIDGE_PORT: '1' });
    expect(config).toMatchObject({ port: 9000, prefix: 'p1', anonymousRead: true, host: '127.0.0.1', pollMs: 500 });
  });

  it('reads the sign-in limits per name and address, 10 a minute and bursts of 20 by default', () => {
    expect(loadConfig([], {})).toMatchObject({ signInPerMinute: 10, signInBurst: 20 });
    const config = loadConfig(['--sign-in-per-minute', '3'], { AG2NET_BRIDGE_SIGN_IN_BURST: '5' });
    expect(config).toMatchObject({ signInPerMinute: 3, signInBurst: 5 });
    expect(() => loadConfig(['--sign-in-burst', '0'], {})).toThrow(ConfigError);
  });

  it('refuses an auth directory without a shared secret, and bad numbers', () => {
    expect(() => loadConfig(['--auth-dir', '/x'], {})).toThrow(/--auth-dir needs --secret/);
    expect(() => loadConfig(['--port', '1e3'], {})).toThrow(ConfigError);
    expect(() => loadConfig(['--nope'], {})).toThrow(ConfigError);
  });
});

describe('the people file', () => {
  it('is re-read when it changes: a person added may sign in, a malformed version keeps the people', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ag2net-bridge-people-'));
    try {
      const file = join(dir, 'bridge-people.json');
      await writeFile(file, JSON.stringify({ you: 'k-you' }));
      const config = loadConfig(['--api-keys', file], {});
      if (config === 'help') throw new Error('unexpected help');
      const people = (await bridgeOptionsOf(config)).apiKeys;
      if (people === undefined) throw new Error('no people');
      const lines: [string, object, string | undefined][] = [];
      using _watching = watchPeopleFile({
        path: file,
        people,
        log: {
          info: (obj, msg) => void lines.push(['info', obj, msg]),
          warn: (obj, msg) => void lines.push(['warn', obj, msg]),
        },
        debounceMs: 10,
      });
      await writeFile(`${file}.next`, JSON.stringify({ you: 'k-you', zoe: 'k-zoe' }));
      await rename(`${file}.next`, file);
      await waitFor(() => lines.length > 0, { what: 'the reload' });
      expect([{ ...people }, lines]).toEqual([
        { you: 'k-you', zoe: 'k-zoe' },
        [['info', { file, people: 2 }, 'people reloaded']],
      ]);

      await writeFile(file, '{ "you": ');
      await waitFor(() => lines.length > 1, { what: 'the warning' });
      expect([{ ...people }, lines[1]]).toEqual([
        { you: 'k-you', zoe: 'k-zoe' },
        [
          'warn',
          { file, reason: `${file} is not JSON` },
          `${file} is not a valid people file; keeping the previous people`,
        ],
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
