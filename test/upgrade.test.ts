/**
 * Upgrade in place: `npm start -- --exit` of the last release with one account for data and identities, then of
 * this code on the same `.data/`. The auth is re-laid out (the same data account, a new identity account, the old
 * signing key gone), every identity keeps its name and id, no envelope of the log is lost or changed, the old JWTs
 * and the old registrant connect nowhere, and the confused-deputy attacks of the upgraded stack are refused.
 *
 * The last release is the commit before the accounts split (`LEGACY_COMMIT`), taken from this repository's history
 * and run with this checkout's node_modules.
 */
import { AuthFile, hubServiceInboxPrefix, readManifest } from '@ag2net/auth';
import { startHub } from '@ag2net/hub';
import { hubNames, EnvelopeSchema, PassportSchema } from '@ag2net/protocol';
import { connectWithCreds, startSecuredNatsServer, type NatsServer } from '@ag2net/test-support';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, readlink, rename, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { storeState, type StoreState } from './support/store-state.js';

/** The last commit of the one-account layout: `npm start` of it lays out what this code upgrades. */
const LEGACY_COMMIT = 'f9c4f56';
const ROOT = resolve(import.meta.dirname, '..');
const PREFIX = 'ag2';
const names = hubNames(PREFIX);
const run = promisify(execFile);

const cleanup: string[] = [];
afterAll(async () => {
  for (const dir of cleanup) await rm(dir, { recursive: true, force: true });
});

/** The tree of `commit` in a fresh directory, resolving packages as this checkout does, its own workspaces its own. */
async function checkout(commit: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ag2net-legacy-'));
  cleanup.push(dir);
  try {
    await run('sh', ['-c', `git -C "${ROOT}" archive ${commit} | tar -x -C "${dir}"`]);
  } catch (err) {
    throw new Error(`the upgrade test needs commit ${commit} of this repository's history (a full clone)`, {
      cause: err,
    });
  }
  const modules = join(ROOT, 'node_modules');
  await mkdir(join(dir, 'node_modules', '@ag2net'), { recursive: true });
  for (const entry of await readdir(modules)) {
    if (entry === '@ag2net' || entry === 'ag2net') {
      // Workspace links are relative (`../../packages/hub`): the same link inside the old tree is the old package.
      const links = entry === 'ag2net' ? [''] : await readdir(join(modules, entry));
      for (const link of links) {
        const from = join(modules, entry, link);
        await symlink(await readlink(from), join(dir, 'node_modules', entry, link));
      }
    } else {
      await symlink(join(modules, entry), join(dir, 'node_modules', entry));
    }
  }
  return dir;
}

/** `npm start -- --exit --data-dir <data>` of the tree at `cwd`, offline; its output. */
async function npmStartOnce(cwd: string, data: string): Promise<string> {
  const child = spawn(
    process.execPath,
    ['--conditions=@ag2net/source', '--import', 'tsx', 'scripts/start.ts', '--exit', '--data-dir', data],
    {
      cwd,
      env: { ...process.env, OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', AG2NET_LLM_BASE_URL: '', NATS_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  expect(code, out).toBe(0);
  return out;
}

/**
 * Both runs use one store and one credentials directory, whichever port `npm start` finds free (4222 keeps `nats/`,
 * a taken one `nats-alt/`): the one the first run made is linked under both names.
 */
async function pinStore(data: string): Promise<string> {
  const kinds = ['nats', 'nats-alt'];
  const made = (await readdir(data)).filter((e) => kinds.includes(e));
  expect(made.length).toBe(1);
  const from = made[0] ?? 'nats';
  for (const [parent, pinned] of [
    [data, 'store'],
    [join(data, 'creds'), 'store'],
  ] as const) {
    await rename(join(parent, from), join(parent, pinned));
    for (const kind of kinds) await symlink(pinned, join(parent, kind));
  }
  return join(data, 'store');
}

/** A secured server on the store with the auth directory's config. */
function serve(data: string, store: string): Promise<NatsServer> {
  return startSecuredNatsServer({ authDir: join(data, 'auth'), storeDir: store });
}

/** Each registered identity's id by name, and every WAL message in order, read as the operator. */
async function contents(admin: NatsConnection): Promise<{ ids: Record<string, string>; wal: string[] }> {
  const kv = await new Kvm(admin).open(names.agentsBucket);
  const ids: Record<string, string> = {};
  for await (const key of await kv.keys(`*.passport`)) {
    const entry = await kv.get(key);
    if (entry === null || entry.operation !== 'PUT') continue;
    const passport = PassportSchema.parse(entry.json());
    ids[passport.name] = passport.agent_id ?? '';
  }
  const jsm = await jetstreamManager(admin);
  const info = await jsm.streams.info(names.walStream);
  const wal: string[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq += 1) {
    const msg = await jsm.streams.getMessage(names.walStream, { seq });
    if (msg !== null) wal.push(msg.string());
  }
  return { ids, wal };
}

/**
 * The store but the lease (renewed by the running hub every third of the bucket's TTL, 6 s as `npm start` made it),
 * once two reads a second apart agree: the hub that just started wrote what it writes at start.
 */
async function stableStore(admin: NatsConnection): Promise<StoreState> {
  const read = async (): Promise<StoreState> => {
    const { streams, consumers } = await storeState(admin, names);
    const { [`KV_${names.leasesBucket}`]: _lease, ...others } = streams;
    return { streams: others, consumers };
  };
  let last = await read();
  for (let i = 0; i < 30; i += 1) {
    await sleep(1_000);
    const now = await read();
    if (JSON.stringify(now) === JSON.stringify(last)) return now;
    last = now;
  }
  throw new Error('the store did not settle');
}

/** The lease's holder as stored, or `null`. */
async function hubHolder(admin: NatsConnection): Promise<string | null> {
  const kv = await new Kvm(admin).open(names.leasesBucket);
  const entry = await kv.get('active');
  return entry === null || entry.operation !== 'PUT' ? null : JSON.stringify(entry.string());
}

describe('npm start upgrades a .data/ of the one-account layout in place', () => {
  it('keeps every identity and envelope, and seals the data from what identities send', async () => {
    const legacy = await checkout(LEGACY_COMMIT);
    const data = await mkdtemp(join(tmpdir(), 'ag2net-upgrade-'));
    cleanup.push(data);
    await npmStartOnce(legacy, data);
    const store = await pinStore(data);
    const auth = join(data, 'auth');
    const oldManifest = z
      .looseObject({ version: z.literal(1) })
      .parse(JSON.parse(await readFile(join(auth, 'manifest.json'), 'utf8')));
    expect(oldManifest.version).toBe(1);
    const oldYou = await readFile(join(data, 'creds', 'store', PREFIX, 'you.creds'), 'utf8');
    const oldRegistrant = await readFile(join(auth, AuthFile.registrantCreds), 'utf8');

    // What the last release left: its demo's identities and transcripts.
    let server = await serve(data, store);
    let admin = await connectWithCreds({
      url: server.url,
      creds: await readFile(join(auth, AuthFile.adminCreds), 'utf8'),
    });
    const before = await contents(admin);
    await admin.close();
    await server.stop();
    expect(Object.keys(before.ids).sort()).toEqual(
      ['billing', 'critic', 'expert', 'optimist', 'pal', 'triage', 'you'].sort(),
    );
    expect(before.wal.length).toBeGreaterThan(20);

    await npmStartOnce(ROOT, data);
    const manifest = await readManifest(join(auth, AuthFile.manifest));
    expect(manifest?.version).toBe(2);
    expect((await readdir(auth)).includes('hub-account-signing.nk')).toBe(false);

    server = await serve(data, store);
    try {
      admin = await connectWithCreds({
        url: server.url,
        creds: await readFile(join(auth, AuthFile.adminCreds), 'utf8'),
      });
      const after = await contents(admin);
      // Every identity kept its name and id; every envelope of the old log is there, unchanged, in order.
      for (const [name, id] of Object.entries(before.ids)) expect(after.ids[name]).toBe(id);
      expect(after.wal.slice(0, before.wal.length)).toEqual(before.wal);
      // The upgraded run's demo added its own transcripts after them.
      expect(after.wal.length).toBeGreaterThan(before.wal.length);
      for (const text of after.wal.slice(before.wal.length, before.wal.length + 3)) {
        expect(EnvelopeSchema.safeParse(JSON.parse(text)).success).toBe(true);
      }

      // The old layout's credentials connect nowhere: their signing key is gone.
      await expect(connectWithCreds({ url: server.url, creds: oldYou })).rejects.toThrow(/Authorization Violation/i);
      await expect(connectWithCreds({ url: server.url, creds: oldRegistrant })).rejects.toThrow(
        /Authorization Violation/i,
      );

      // The confused deputy: `you`, on the credentials the upgraded hub issued it, aims the hub's answer and the
      // server's at the data. Nothing moves.
      const hubNc = await connectWithCreds({
        url: server.url,
        creds: await readFile(join(auth, AuthFile.hubServiceCreds), 'utf8'),
        inboxPrefix: hubServiceInboxPrefix(names),
      });
      const hub = await startHub({
        connection: hubNc,
        prefix: PREFIX,
        sweepIntervalMs: 0,
        leaseTtlMs: 600_000,
        credentials: {
          accountPublicKey: manifest?.identity_account.public_key ?? '',
          signingSeed: (await readFile(join(auth, AuthFile.identityAccountSigningSeed), 'utf8')).trim(),
        },
      });
      try {
        const youId = after.ids['you'] ?? '';
        const you = await connectWithCreds({
          url: server.url,
          creds: await readFile(join(data, 'creds', 'store', PREFIX, 'you.creds'), 'utf8'),
          inboxPrefix: `_INBOX_${youId}`,
        });
        const settled = await stableStore(admin);
        const aim = [
          `$JS.API.STREAM.PURGE.${names.walStream}`,
          `$JS.API.STREAM.PURGE.KV_${names.agentsBucket}`,
          `$JS.API.STREAM.PURGE.${names.auditStream}`,
          `$KV.${names.leasesBucket}.active`,
          `$KV.${names.agentsBucket}.${after.ids['expert'] ?? ''}.passport`,
          `$JS.API.CONSUMER.DELETE.${names.inboxStream}.${names.inboxConsumer(after.ids['expert'] ?? '')}`,
        ];
        for (const reply of aim) {
          you.publish(names.rpc('health'), '{}', { reply });
          you.publish(names.rpc('pendingTurnsFor', youId), '{}', { reply });
          you.publish(`$JS.API.CONSUMER.INFO.${names.inboxStream}.${names.inboxConsumer(youId)}`, '', { reply });
        }
        await you.flush();
        // The hub answered each (its answers went where the server routes them: back into the identity account).
        const answered = await you.request(names.rpc('health'), '{}', { timeout: 10_000 });
        expect(z.looseObject({ ok: z.literal(true) }).parse(answered.json())).toBeTruthy();
        await sleep(500);
        expect(await stableStore(admin)).toEqual(settled);
        expect(JSON.parse((await hubHolder(admin)) ?? 'null')).toBe(hub.hubId);
        await you.close();
      } finally {
        await hub.close();
        await hubNc.close();
      }
      await admin.close();
    } finally {
      await server.stop();
    }
  }, 300_000);
});
