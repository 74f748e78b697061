import { AuthFile, authInit, type AuthLayout } from '@ag2net/auth';
import { AuthBlockSchema } from '@ag2net/protocol';
import { waitFor } from '@ag2net/test-support';
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, type HubServiceConfig } from './config.js';
import { apiKeysFileAuthenticator, loadHubAuth, openApiKeysFile } from './hub-auth.js';

let root: string;
let auth: AuthLayout;

// authInit signs a dozen keys with pure-JS ed25519: seconds on a loaded machine.
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ag2net-hub-auth-'));
  auth = await authInit({ dir: join(root, 'auth'), prefix: 'acme' });
}, 30_000);

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function config(argv: readonly string[]): HubServiceConfig {
  const loaded = loadConfig(['--prefix', 'acme', ...argv], {});
  if (loaded === 'help') throw new Error('unexpected help');
  return loaded;
}

/** The ConfigError message `loadHubAuth` rejects with. */
async function refusal(argv: readonly string[]): Promise<string> {
  try {
    await loadHubAuth(config(argv));
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('loadHubAuth', () => {
  it('is null without --auth-dir: the hub issues no credentials', async () => {
    expect(await loadHubAuth(config([]))).toBeNull();
  });

  it('connects as the hub-service user and issues with the hub account’s signing key', async () => {
    const loaded = await loadHubAuth(config(['--auth-dir', auth.dir, '--credentials-ttl', '900']));
    expect(loaded?.connection.inboxPrefix).toBe('_HUB_INBOX_acme');
    expect(loaded?.connection.authenticator).toBeTypeOf('function');
    expect(loaded?.hub.credentials).toEqual({
      accountPublicKey: auth.manifest.identity_account.public_key,
      signingSeed: (await readFile(auth.path(AuthFile.identityAccountSigningSeed), 'utf8')).trim(),
      ttlSeconds: 900,
    });
    // No admission configured: the hub's default, which refuses every registration.
    expect(loaded?.admission).toBe('none');
    expect(loaded?.hub.authenticator).toBeUndefined();
  });

  it('admits with the API keys file, or anyone with --open-registration', async () => {
    const keysFile = join(root, 'keys.json');
    await writeFile(keysFile, JSON.stringify({ alice: 'k-alice' }));
    const withKeys = await loadHubAuth(config(['--auth-dir', auth.dir, '--api-keys', keysFile]));
    expect(withKeys?.admission).toBe('api-keys');
    const token = (t: string) => AuthBlockSchema.parse({ scheme: 'api_key', claim: { token: t } });
    await expect(
      withKeys?.hub.authenticator?.admit({ name: 'alice', auth: token('k-alice') }),
    ).resolves.toBeUndefined();
    await expect(withKeys?.hub.authenticator?.admit({ name: 'alice', auth: token('k-bob') })).rejects.toThrow(
      "admission refused for 'alice'",
    );
    const open = await loadHubAuth(config(['--auth-dir', auth.dir, '--open-registration']));
    expect(open?.admission).toBe('open');
    await expect(
      open?.hub.authenticator?.admit({ name: 'x', auth: AuthBlockSchema.parse({}) }),
    ).resolves.toBeUndefined();
  });

  it('refuses a directory of another prefix, a missing layout and a malformed API keys file', async () => {
    const loaded = loadConfig(['--prefix', 'other', '--auth-dir', auth.dir], {});
    if (loaded === 'help') throw new Error('unexpected help');
    await expect(loadHubAuth(loaded)).rejects.toThrow(
      `--auth-dir ${auth.dir} was laid out for prefix acme, not other: rerun ag2net-auth init --dir ${auth.dir} --prefix other`,
    );
    const empty = join(root, 'empty');
    expect(await refusal(['--auth-dir', empty])).toBe(
      `--auth-dir ${empty} holds no manifest.json: lay it out with ag2net-auth init --dir ${empty}`,
    );
    const bad = join(root, 'bad.json');
    await writeFile(bad, JSON.stringify({ alice: 7 }));
    expect(await refusal(['--auth-dir', auth.dir, '--api-keys', bad])).toMatch(
      new RegExp(`^--api-keys ${bad} must map identity names to keys`),
    );
    await writeFile(bad, '{ not json');
    expect(await refusal(['--auth-dir', auth.dir, '--api-keys', bad])).toBe(`--api-keys ${bad} is not JSON`);
    expect(await refusal(['--auth-dir', auth.dir, '--api-keys', join(root, 'none.json')])).toMatch(
      new RegExp(`^--api-keys ${join(root, 'none.json')} cannot be read: ENOENT`),
    );
  });
});

describe('the API keys file', () => {
  const token = (t: string) => AuthBlockSchema.parse({ scheme: 'api_key', claim: { token: t } });

  it('admits a name added to the file without a restart, and keeps the keys while the file is malformed', async () => {
    const keysFile = join(root, 'reloaded.json');
    await writeFile(keysFile, JSON.stringify({ alice: 'k-alice' }));
    const loaded = await loadHubAuth(config(['--auth-dir', auth.dir, '--api-keys', keysFile]));
    const admit = (name: string, key: string) =>
      loaded?.hub.authenticator?.admit({ name, auth: token(key) }) ?? Promise.reject(new Error('no authenticator'));
    const lines: [string, object, string | undefined][] = [];
    using _watching = loaded?.apiKeys?.watch(
      {
        info: (obj, msg) => void lines.push(['info', obj, msg]),
        warn: (obj, msg) => void lines.push(['warn', obj, msg]),
      },
      { debounceMs: 10 },
    );
    await expect(admit('newbie', 'k-new')).rejects.toThrow("admission refused for 'newbie'");

    // Written as `ag2net people add` writes it: a new file renamed over the old one.
    await writeFile(`${keysFile}.next`, JSON.stringify({ alice: 'k-alice', newbie: 'k-new' }));
    await rename(`${keysFile}.next`, keysFile);
    await waitFor(() => lines.length > 0, { what: 'the reload' });
    await expect(admit('newbie', 'k-new')).resolves.toBeUndefined();
    expect(lines).toEqual([['info', { file: keysFile, keys: 2 }, 'API keys reloaded']]);

    await writeFile(keysFile, '{ "alice": ');
    await waitFor(() => lines.length > 1, { what: 'the warning' });
    expect(lines[1]).toEqual([
      'warn',
      { file: keysFile, reason: `--api-keys ${keysFile} is not JSON` },
      `${keysFile} is not a valid API keys file; keeping the previous keys`,
    ]);
    await expect(admit('newbie', 'k-new')).resolves.toBeUndefined();
    await expect(admit('alice', 'k-alice')).resolves.toBeUndefined();
    expect(loaded?.apiKeys?.size).toBe(2);
  });

  it('reloads on demand: unchanged text is no reload, and a name removed from the file is refused', async () => {
    const keysFile = join(root, 'on-demand.json');
    await writeFile(keysFile, JSON.stringify({ alice: 'k-alice', bob: 'k-bob' }));
    const file = await openApiKeysFile(keysFile);
    expect(await file.reload()).toEqual({ outcome: 'unchanged' });
    await writeFile(keysFile, JSON.stringify({ alice: 'k-alice' }));
    expect(await file.reload()).toEqual({ outcome: 'reloaded', keys: 1 });
    await expect(apiKeysFileAuthenticator(file).admit({ name: 'bob', auth: token('k-bob') })).rejects.toThrow(
      "admission refused for 'bob'",
    );
    await writeFile(keysFile, JSON.stringify({ alice: 7 }));
    expect(await file.reload()).toMatchObject({ outcome: 'kept' });
    expect([file.size, file.get('alice')]).toEqual([1, 'k-alice']);
  });
});
