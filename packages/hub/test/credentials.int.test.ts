/**
 * A secured hub issues each identity its own NATS credentials: registration with an API key and the identity's
 * public key answers a user JWT for that key; the identity connects with it and its own seed and calls as itself.
 * Admission is checked at register and attach, the claim is never kept, and unregistering revokes at once what the
 * hub controls (RPC, inbox, renewal). Real nats-server in operator mode, real credentials.
 */
import {
  createIdentityKeys,
  credsFile,
  identityInboxPrefix,
  identityPermissions,
  registrantInboxPrefix,
  type NkeyPair,
} from '@ag2net/auth';
import { HubRpc } from '@ag2net/client';
import { type HubRequest, type IssuedCredentials, type Passport } from '@ag2net/protocol';
import { connectWithCreds } from '@ag2net/test-support';
import { jetstreamManager } from '@nats-io/jetstream';
import { decode, type User } from '@nats-io/jwt';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSecuredStack, type SecuredStack } from '../../../test/support/secured-stack.js';
import { failure } from './support.js';

const KEYS = {
  alice: 'k-alice-0123456789',
  bob: 'k-bob-0123456789',
  carol: 'k-carol',
  dave: 'k-dave',
  erin: 'k-erin',
  frank: 'k-frank',
};

let stack: SecuredStack;
let registrant: NatsConnection;
let rpc: HubRpc;
/** The public directory, read as the operator (the registrant may only register, attach and ask for health). */
let directory: HubRpc;
const opened: NatsConnection[] = [];

beforeAll(async () => {
  stack = await startSecuredStack({ apiKeys: KEYS });
  registrant = await connectWithCreds({
    url: stack.url,
    creds: stack.registrantCreds,
    inboxPrefix: registrantInboxPrefix(stack.names),
  });
  opened.push(registrant);
  rpc = new HubRpc(registrant, { prefix: stack.prefix, retryForMs: 5_000 });
  const admin = await connectWithCreds({ url: stack.url, creds: stack.adminCreds });
  opened.push(admin);
  directory = new HubRpc(admin, { prefix: stack.prefix, retryForMs: 5_000 });
}, 60_000);

afterAll(async () => {
  for (const nc of opened) if (!nc.isClosed()) await nc.close();
  await stack?.stop();
});

const apiKey = (token: unknown) => ({ scheme: 'api_key', claim: { token } });

/** `register` over the registrant's connection. */
function registerAs(name: string, keys: NkeyPair | null, token: unknown = KEYS[name as keyof typeof KEYS]) {
  const request: HubRequest<'register'> = {
    passport: { name, auth: apiKey(token) },
    public_key: keys?.publicKey ?? null,
  };
  return rpc.call('register', request);
}

/** The identity's own connection: the issued JWT, its own seed, the issued inbox prefix. */
async function connectAs(credentials: IssuedCredentials, keys: NkeyPair): Promise<NatsConnection> {
  const nc = await connectWithCreds({
    url: stack.url,
    creds: credsFile(credentials.jwt, keys.seed),
    inboxPrefix: credentials.inbox_prefix,
  });
  opened.push(nc);
  return nc;
}

/** A registered identity with its keys, credentials and connection. */
async function identity(name: string): Promise<{
  id: string;
  keys: NkeyPair;
  passport: Passport;
  credentials: IssuedCredentials;
  nc: NatsConnection;
  rpc: HubRpc;
}> {
  const keys = createIdentityKeys();
  const { passport, credentials } = await registerAs(name, keys);
  if (credentials === null || passport.agent_id === null) throw new Error('the secured hub issued no credentials');
  const nc = await connectAs(credentials, keys);
  return {
    id: passport.agent_id,
    keys,
    passport,
    credentials,
    nc,
    rpc: new HubRpc(nc, { prefix: stack.prefix, retryForMs: 5_000 }),
  };
}

const fingerprint = (token: string): string => createHash('sha256').update(token).digest('hex').slice(0, 16);

describe('registration on a secured hub', () => {
  it('issues a JWT for the caller’s key with the identity’s permissions, and the identity calls as itself', async () => {
    const before = Math.floor(Date.now() / 1000);
    const alice = await identity('alice');
    const after = Math.floor(Date.now() / 1000);
    const claims = decode<User>(alice.credentials.jwt);
    expect(claims.sub).toBe(alice.keys.publicKey);
    expect(claims.name).toBe(alice.id);
    expect(claims.iss).toBe(stack.auth.manifest.identity_account.signing_key);
    expect(claims.nats.issuer_account).toBe(stack.auth.manifest.identity_account.public_key);
    const permissions = identityPermissions(stack.names, alice.id);
    expect(claims.nats.pub?.allow).toEqual(permissions.pub.allow);
    expect(claims.nats.sub?.allow).toEqual(permissions.sub.allow);
    // Default lifetime: one hour from when the hub issued it (the JWT's own `iat` is stamped a moment later, so it
    // may fall in the next second), and `expires_at` says exactly when.
    const issuedAt = (claims.exp ?? 0) - 3_600;
    expect(issuedAt >= before && issuedAt <= after).toBe(true);
    expect([3_599, 3_600]).toContain((claims.exp ?? 0) - (claims.iat ?? 0));
    expect(alice.credentials.expires_at).toBe(new Date((claims.exp ?? 0) * 1000).toISOString());
    expect(alice.credentials.inbox_prefix).toBe(identityInboxPrefix(alice.id));

    const { resume } = await alice.rpc.call('setResume', { resume: { summary: 'me' } }, { caller: alice.id });
    expect(resume.summary).toBe('me');
    expect(resume.version).toBe(2);
  });

  it('refuses a registration without a public key', async () => {
    expect(await failure(registerAs('bob', null))).toEqual({
      code: 'invalid_request',
      message:
        "this hub issues credentials: register needs public_key, the nkey user public key of the identity's key pair",
    });
  });

  it('refuses a wrong and an unregistered API key alike, a missing one and another scheme', async () => {
    const keys = createIdentityKeys();
    // A wrong key and a name without one get the same answer: a refusal says nothing about the keys file.
    expect(await failure(registerAs('bob', keys, 'k-bob-0123456788'))).toEqual({
      code: 'auth_failed',
      message: "admission refused for 'bob'",
    });
    expect(await failure(registerAs('bob', keys, 42))).toEqual({
      code: 'auth_failed',
      message: "api_key claim missing required string field 'token'",
    });
    expect(await failure(registerAs('mallory', keys, 'anything'))).toEqual({
      code: 'auth_failed',
      message: "admission refused for 'mallory'",
    });
    expect(await failure(rpc.call('register', { passport: { name: 'bob' }, public_key: keys.publicKey }))).toEqual({
      code: 'auth_failed',
      message: "auth scheme 'none' is not accepted by this hub: register with scheme 'api_key' and claim { token }",
    });
    expect((await directory.call('findAgentId', { name: 'bob' })).agent_id).toBeNull();
  });

  it('never stores nor returns the claim: the passport keeps the scheme and the key’s fingerprint', async () => {
    const bob = await identity('bob');
    const shown = {
      scheme: 'api_key',
      issuer: null,
      audience: null,
      key_fingerprint: fingerprint(KEYS.bob),
      claim: {},
    };
    expect(bob.passport.auth).toEqual(shown);
    expect((await directory.call('getAgent', { name_or_id: 'bob' })).passport.auth).toEqual(shown);
    const listed = (await directory.call('listAgents', {})).agents.find((p) => p.name === 'bob');
    expect(listed?.auth).toEqual(shown);
    // Nothing in the registry bucket holds a token, read as the operator reads it.
    const admin = await connectWithCreds({ url: stack.url, creds: stack.adminCreds });
    opened.push(admin);
    const kv = await new Kvm(admin).open(stack.names.agentsBucket);
    const stored: string[] = [];
    for await (const key of await kv.keys()) {
      const entry = await kv.get(key);
      if (entry !== null && entry.operation === 'PUT') stored.push(entry.string());
    }
    expect(stored.length).toBeGreaterThanOrEqual(8);
    for (const token of Object.values(KEYS)) expect(stored.join('\n')).not.toContain(token);
  });

  it('answers a retry with the same key with the same identity and a fresh JWT; another key finds the name taken', async () => {
    const keys = createIdentityKeys();
    const first = await registerAs('carol', keys);
    const again = await registerAs('carol', keys);
    expect(again.passport).toEqual(first.passport);
    expect(again.credentials?.inbox_prefix).toBe(first.credentials?.inbox_prefix);
    expect(decode<User>(again.credentials?.jwt ?? '').sub).toBe(keys.publicKey);
    const named = await rpc.call('register', {
      passport: { name: 'carol', auth: apiKey(KEYS.carol), agent_id: first.passport.agent_id },
      public_key: keys.publicKey,
    });
    expect(named.passport.agent_id).toBe(first.passport.agent_id);
    const thief = createIdentityKeys();
    for (const agentId of [null, first.passport.agent_id]) {
      const err = await failure(
        rpc.call('register', {
          passport: { name: 'carol', auth: apiKey(KEYS.carol), agent_id: agentId },
          public_key: thief.publicKey,
        }),
      );
      expect(err).toEqual({
        code: 'protocol_error',
        message: `name 'carol' already registered (agent_id=${first.passport.agent_id}); unregister it before re-registering.`,
      });
    }
  });
});

describe('attach and renewal', () => {
  it('attach answers a fresh JWT for the registered key only, after admission', async () => {
    const dave = await identity('dave');
    const attached = await rpc.call('attach', {
      name_or_id: 'dave',
      public_key: dave.keys.publicKey,
      auth: apiKey(KEYS.dave),
    });
    expect(attached.passport).toEqual(dave.passport);
    if (attached.credentials === null) throw new Error('no credentials');
    expect(decode<User>(attached.credentials.jwt).sub).toBe(dave.keys.publicKey);
    const nc = await connectAs(attached.credentials, dave.keys);
    const byId = new HubRpc(nc, { prefix: stack.prefix, retryForMs: 5_000 });
    expect((await byId.call('setRule', { rule: {} }, { caller: dave.id })).rule.version).toBe(2);

    const other = createIdentityKeys();
    expect(
      await failure(rpc.call('attach', { name_or_id: dave.id, public_key: other.publicKey, auth: apiKey(KEYS.dave) })),
    ).toEqual({ code: 'auth_failed', message: "public_key does not match the key 'dave' registered with" });
    expect(
      await failure(rpc.call('attach', { name_or_id: 'dave', public_key: dave.keys.publicKey, auth: apiKey('nope') })),
    ).toEqual({ code: 'auth_failed', message: "admission refused for 'dave'" });
    // Admission comes first: a name nobody registered is refused exactly like a registered one with a wrong key.
    expect(
      await failure(rpc.call('attach', { name_or_id: 'nobody', public_key: dave.keys.publicKey, auth: apiKey('x') })),
    ).toEqual({ code: 'auth_failed', message: "admission refused for 'nobody'" });
  });

  it('renewCredentials answers a new JWT for the caller’s registered key, and it connects', async () => {
    const erin = await identity('erin');
    const { credentials } = await erin.rpc.call('renewCredentials', {}, { caller: erin.id });
    expect(credentials.inbox_prefix).toBe(identityInboxPrefix(erin.id));
    expect(decode<User>(credentials.jwt).sub).toBe(erin.keys.publicKey);
    const nc = await connectAs(credentials, erin.keys);
    const renewed = new HubRpc(nc, { prefix: stack.prefix, retryForMs: 5_000 });
    await renewed.call('setSkill', { skill_md: '# erin' }, { caller: erin.id });
    expect((await directory.call('getSkill', { agent_id: erin.id })).skill_md).toBe('# erin');
  });
});

describe('revocation', () => {
  it('unregister refuses the identity’s RPCs at once, deletes its inbox consumer and renews nothing', async () => {
    const frank = await identity('frank');
    const admin = await connectWithCreds({ url: stack.url, creds: stack.adminCreds });
    opened.push(admin);
    const jsm = await jetstreamManager(admin);
    const consumer = stack.names.inboxConsumer(frank.id);
    expect((await jsm.consumers.info(stack.names.inboxStream, consumer)).name).toBe(consumer);

    await frank.rpc.call('unregister', {}, { caller: frank.id });

    await expect(jsm.consumers.info(stack.names.inboxStream, consumer)).rejects.toThrow('consumer not found');
    expect(await failure(frank.rpc.call('setSkill', { skill_md: 'x' }, { caller: frank.id }))).toMatchObject({
      code: 'access_denied',
    });
    expect(await failure(frank.rpc.call('renewCredentials', {}, { caller: frank.id }))).toMatchObject({
      code: 'access_denied',
    });
    // Admitted under its name, it learns that the name is free again (and may register it anew).
    expect(
      await failure(
        rpc.call('attach', { name_or_id: 'frank', public_key: frank.keys.publicKey, auth: apiKey(KEYS.frank) }),
      ),
    ).toEqual({ code: 'not_found', message: 'agent not found: frank' });
  });
});
