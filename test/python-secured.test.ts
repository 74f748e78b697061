/**
 * The Python client on a secured deployment, beside the TypeScript client: the Python agent connects with the
 * registrant's `.creds` file, registers with an API key and its own nkey, runs over its own connection on the JWT the
 * hub issued (persisted at 0600 in the standard `.creds` format), renews it before it expires, and comes back as the
 * same identity with the persisted credentials, or with fresh ones from the `attach` operation once they lapsed.
 */
import { AuthFile, pushAccountJwt, revokeUser } from '@ag2net/auth';
import { HubClient } from '@ag2net/client';
import { EV_TEXT, replyEnvelopeId } from '@ag2net/protocol';
import { connectWithCreds, waitFor, within } from '@ag2net/test-support';
import { fromSeed } from '@nats-io/nkeys';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PYTHON_REQUIRED, pythonWithAg2net, startPythonParty, type PythonParty } from './support/python.js';
import { startSecuredStack, type SecuredStack } from './support/secured-stack.js';

const python = pythonWithAg2net();
/** The API keys of the Python agent and of the TypeScript people (a fresh person per question, see `consult`). */
const ASKERS = 6;
const PY_KEY = 'k-py-secure';
const KEYS: Readonly<Record<string, string>> = {
  'py-secure': PY_KEY,
  // The identities of clients/python/README.md's quick start.
  'echo-py': 'k-echo-py',
  'py-user': 'k-py-user',
  ...Object.fromEntries(Array.from({ length: ASKERS }, (_, i): [string, string] => [`ts-asker-${i}`, `k-ts-${i}`])),
};
/** Short-lived credentials, so that the test sees renewals and a lapse within seconds. */
const TTL_SECONDS = 10;

let stack: SecuredStack;
let dir: string;
let hub: HubClient;
let askers = 0;
const parties: PythonParty[] = [];

function apiKey(token: string): { scheme: 'api_key'; claim: { token: string } } {
  return { scheme: 'api_key', claim: { token } };
}

/** The Python agent `py-secure`, on the registrant's credentials, keeping its own at `credsPath`. */
function pythonAgent(credsPath: string, key: string | null): PythonParty {
  if (python === null) throw new Error('no Python with ag2net (set AG2NET_PYTHON or run .ci/run)');
  const args = ['--creds', stack.paths.registrantCreds, 'agent', '--name', 'py-secure', '--creds-path', credsPath];
  const party = startPythonParty({
    python,
    natsUrl: stack.url,
    prefix: stack.prefix,
    args: key === null ? args : [...args, '--api-key', key],
  });
  parties.push(party);
  return party;
}

async function readyId(party: PythonParty): Promise<string> {
  return String(
    (
      await within(
        party.line((l) => l.event === 'ready'),
        30_000,
        'the Python agent',
      )
    )['agent_id'],
  );
}

const ClaimsSchema = z.looseObject({ name: z.string(), sub: z.string(), exp: z.number() });

/** The claims of the JWT and the seed's public key of a `.creds` file. */
async function persisted(path: string): Promise<{ claims: z.infer<typeof ClaimsSchema>; publicKey: string }> {
  const text = await readFile(path, 'utf8');
  const jwt = /BEGIN NATS USER JWT-+\s+(\S+)/.exec(text)?.[1] ?? '';
  const seed = /BEGIN USER NKEY SEED-+\s+(\S+)/.exec(text)?.[1] ?? '';
  const claims = ClaimsSchema.parse(JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')));
  return { claims, publicKey: fromSeed(new TextEncoder().encode(seed)).getPublicKey() };
}

/**
 * A fresh TypeScript person asks `question` in a consulting channel with the Python agent; resolves with the answer.
 * Fresh, so that the whole exchange runs well within the person's first JWT (this test is about the Python side).
 */
async function consult(question: string, pyId: string): Promise<{ text: unknown; id: string; trigger: string }> {
  const name = `ts-asker-${askers++}`;
  const asker = await hub.registerHuman({ name, auth: apiKey(KEYS[name] ?? '') });
  const channel = await asker.open({ type: 'consulting', target: 'py-secure' });
  const answer = asker.nextEnvelope({
    predicate: (e) => e.channel_id === channel.channelId && e.event_type === EV_TEXT && e.sender_id === pyId,
    timeout: 30_000,
  });
  const trigger = await channel.send(question);
  const reply = await answer;
  await asker.disconnect();
  return { text: reply?.event_data['text'], id: reply?.envelope_id ?? '', trigger };
}

describe.skipIf(python === null && !PYTHON_REQUIRED)('the Python client on a secured stack', () => {
  beforeAll(async () => {
    stack = await startSecuredStack({ apiKeys: KEYS, credentialsTtlSeconds: TTL_SECONDS });
    dir = await mkdtemp(join(tmpdir(), 'ag2net-py-creds-'));
    hub = await HubClient.connect({ servers: stack.url, prefix: stack.prefix, creds: stack.paths.registrantCreds });
  }, 30_000);

  afterAll(async () => {
    await Promise.all(parties.splice(0).map((p) => p.kill()));
    await hub.close();
    await stack.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses a Python registration with the wrong API key, and registers nothing', async () => {
    const refused = join(dir, 'refused.creds');
    const party = pythonAgent(refused, 'not-the-key');

    expect(await party.exited).toBe(1);
    expect(existsSync(refused)).toBe(false);
    expect(party.stderr()).toContain("AuthError: admission refused for 'py-secure'");
    const operator = await HubClient.connect({ servers: stack.url, prefix: stack.prefix, creds: stack.adminCreds });
    expect(await operator.findAgentId('py-secure')).toBeNull();
    await operator.close();
  }, 30_000);

  it('a Python agent on its issued credentials answers a TypeScript person, also past its first JWT’s lifetime', async () => {
    const credsPath = join(dir, 'py-secure.creds');
    const pyId = await readyId(pythonAgent(credsPath, PY_KEY));
    const first = await persisted(credsPath);

    expect((await stat(credsPath)).mode & 0o777).toBe(0o600);
    expect([first.claims.name, first.claims.sub]).toEqual([pyId, first.publicKey]);
    const before = await consult('What is 6*7?', pyId);
    expect(before).toEqual({
      text: 'py:What is 6*7?',
      id: replyEnvelopeId(pyId, before.trigger),
      trigger: before.trigger,
    });

    // Past the first JWT's expiry the server has closed the connection it authenticated; it came back renewed.
    await waitFor(() => Date.now() > first.claims.exp * 1000 + 1_000, { timeoutMs: 20_000 });
    const after = await consult('still there?', pyId);
    const renewed = await persisted(credsPath);

    expect(after.text).toBe('py:still there?');
    expect([renewed.claims.sub, renewed.claims.name, renewed.claims.exp > first.claims.exp]).toEqual([
      first.publicKey,
      pyId,
      true,
    ]);
  }, 60_000);

  it('a restarted Python agent comes back as the same identity: with its persisted JWT, then with a fresh one once it lapsed', async () => {
    const credsPath = join(dir, 'py-secure.creds');
    const { name: pyId, exp } = (await persisted(credsPath)).claims;
    // Killed right after a renewal rewrote its file, so that the persisted JWT is far from its expiry.
    await waitFor(async () => (await persisted(credsPath)).claims.exp > exp, { timeoutMs: 20_000 });
    await Promise.all(parties.splice(0).map((p) => p.kill()));

    // Still valid: attached with the persisted credentials, no admission credential needed.
    const restarted = pythonAgent(credsPath, null);
    expect(await readyId(restarted)).toBe(pyId);
    expect((await consult('back?', pyId)).text).toBe('py:back?');
    await restarted.kill();

    // Lapsed while nobody renewed them: the `attach` operation issues a fresh JWT for the same key.
    const lapsed = await persisted(credsPath);
    await waitFor(() => Date.now() > lapsed.claims.exp * 1000, { timeoutMs: 20_000 });
    expect(await readyId(pythonAgent(credsPath, PY_KEY))).toBe(pyId);
    const fresh = await persisted(credsPath);

    expect([fresh.claims.sub, fresh.claims.exp > lapsed.claims.exp]).toEqual([lapsed.publicKey, true]);
    expect((await consult('and now?', pyId)).text).toBe('py:and now?');
  }, 60_000);

  it('a revoked Python agent is refused with its key; re-admitted, it attaches again though NATS refuses its persisted JWT', async () => {
    const credsPath = join(dir, 'py-secure.creds');
    const pyId = (await persisted(credsPath)).claims.name;
    await Promise.all(parties.splice(0).map((p) => p.kill()));
    const operator = await HubClient.connect({
      servers: stack.url,
      prefix: stack.prefix,
      creds: stack.adminCreds,
      operator: true,
    });
    try {
      // What `ag2net creds revoke --agent` does: the hub's revocation, then the key's in the account, pushed.
      const revoked = await operator.call('revokeIdentity', { name_or_id: 'py-secure' });
      const account = await revokeUser({
        dir: stack.authDir,
        userPublicKey: revoked.public_key ?? '',
        atSeconds: Math.floor(Date.parse(revoked.revoked_at ?? '') / 1000),
      });
      const system = await connectWithCreds({
        url: stack.url,
        creds: await readFile(join(stack.authDir, AuthFile.systemUserCreds), 'utf8'),
      });
      await pushAccountJwt(system, account);
      await system.close();

      const refused = pythonAgent(credsPath, PY_KEY);
      expect(await refused.exited).toBe(1);
      expect(refused.stderr()).toContain("AuthError: admission refused for 'py-secure'");

      await operator.call('readmitIdentity', { name_or_id: 'py-secure' });
      const before = await persisted(credsPath);
      expect(await readyId(pythonAgent(credsPath, PY_KEY))).toBe(pyId);
      const after = await persisted(credsPath);
      expect([after.publicKey, after.claims.sub, after.claims.exp > before.claims.exp]).toEqual([
        before.publicKey,
        before.publicKey,
        true,
      ]);
      expect((await consult('re-admitted?', pyId)).text).toBe('py:re-admitted?');
    } finally {
      await operator.close();
    }
  }, 60_000);

  it('runs the quick start of clients/python/README.md as it is, twice: registered, then attached again', async () => {
    if (python === null) throw new Error('no Python with ag2net');
    const readme = await readFile(fileURLToPath(new URL('../clients/python/README.md', import.meta.url)), 'utf8');
    const code = /```python\n([\s\S]*?)```/.exec(readme)?.[1]?.replace(/^ {3}/gm, '') ?? '';
    const script = join(dir, 'hello.py');
    const keys = join(dir, 'api-keys.json');
    const credsDir = join(dir, 'quick-start');
    await writeFile(script, code);
    await writeFile(keys, JSON.stringify({ 'echo-py': KEYS['echo-py'], 'py-user': KEYS['py-user'] }));
    await mkdir(credsDir);
    // What `npm start` prints on its export line.
    const env = {
      ...process.env,
      NATS_URL: stack.url,
      AG2NET_PREFIX: stack.prefix,
      NATS_CREDS: stack.paths.registrantCreds,
      AG2NET_API_KEYS: keys,
      AG2NET_CREDS_DIR: credsDir,
    };
    for (const run of [1, 2]) {
      // From a directory outside the repository, as a project of one's own would run it.
      const child = spawn(python, [script], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
      const code = await within(
        new Promise<number | null>((resolve) => child.once('exit', resolve)),
        45_000,
        `quick start run ${run}`,
      );
      expect({ code, out }, err).toEqual({ code: 0, out: 'echo: What is ag2net?\n' });
    }
    expect((await readdir(credsDir)).sort()).toEqual(['echo-py.creds', 'py-user.creds']);
  }, 90_000);
});
