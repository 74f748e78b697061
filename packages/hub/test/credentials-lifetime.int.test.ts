/**
 * Credentials over time: a secured hub admits nobody until its operator says who may register; every hub of a prefix
 * issues with the same signing key, so an identity renews across a failover; NATS itself refuses a JWT once it
 * lapses; and a hub that issues no credentials says so.
 */
import { createIdentityKeys, credsFile, registrantInboxPrefix, type NkeyPair } from '@ag2net/auth';
import { HubRpc } from '@ag2net/client';
import { openRegistration, startHub, type Hub } from '@ag2net/hub';
import type { IssuedCredentials } from '@ag2net/protocol';
import { connectWithCreds, natsPerFile, uniqueName, waitFor } from '@ag2net/test-support';
import { decode, type User } from '@nats-io/jwt';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSecuredStack, type SecuredStack } from '../../../test/support/secured-stack.js';
import { failure } from './support.js';

const plain = natsPerFile();
let stack: SecuredStack;
let rpc: HubRpc;
const opened: NatsConnection[] = [];

beforeAll(async () => {
  // No admission configured; a short lease so that a standby takes over soon after the active hub closes.
  stack = await startSecuredStack({ hub: { leaseTtlMs: 1_500, sweepIntervalMs: 0 } });
  const registrant = await connectWithCreds({
    url: stack.url,
    creds: stack.registrantCreds,
    inboxPrefix: registrantInboxPrefix(stack.names),
  });
  opened.push(registrant);
  rpc = new HubRpc(registrant, { prefix: stack.prefix, retryForMs: 10_000 });
}, 60_000);

afterAll(async () => {
  for (const nc of opened) if (!nc.isClosed()) await nc.close();
  await stack?.stop();
});

/** Closes the serving hub and waits until `next` (a standby) serves instead. */
async function failOver(current: Hub, next: Hub): Promise<void> {
  await current.close();
  await next.whenActive();
}

async function connectAs(credentials: IssuedCredentials, keys: NkeyPair): Promise<NatsConnection> {
  const nc = await connectWithCreds({
    url: stack.url,
    creds: credsFile(credentials.jwt, keys.seed),
    inboxPrefix: credentials.inbox_prefix,
  });
  opened.push(nc);
  return nc;
}

/** Registers `name` (open registration) with a fresh key pair. */
async function register(name: string): Promise<{ id: string; keys: NkeyPair; credentials: IssuedCredentials }> {
  const keys = createIdentityKeys();
  const { passport, credentials } = await rpc.call('register', { passport: { name }, public_key: keys.publicKey });
  if (credentials === null || passport.agent_id === null) throw new Error('no credentials issued');
  return { id: passport.agent_id, keys, credentials };
}

// One secured hub after another on the same prefix: the tests run in order and hand the serving hub on.
describe('a secured hub over time', () => {
  let serving: Hub;
  /** Alice's own connection, from the renewal test on. */
  let asAlice: HubRpc;
  let aliceId: string;

  it('admits nobody when its operator configured no admission, and says how to configure it', async () => {
    serving = stack.hub;
    const keys = createIdentityKeys();
    expect(await failure(rpc.call('register', { passport: { name: 'alice' }, public_key: keys.publicKey }))).toEqual({
      code: 'auth_failed',
      message:
        'this hub admits no registrations: its operator configures API keys (hub-service --api-keys) or open registration (--open-registration)',
    });
  });

  it('renews an identity’s credentials across a failover: the standby knows its key and signs with the same key', async () => {
    const open = await stack.startHub({ authenticator: openRegistration() });
    await failOver(serving, open);
    const alice = await register('alice');
    const nc = await connectAs(alice.credentials, alice.keys);
    asAlice = new HubRpc(nc, { prefix: stack.prefix, retryForMs: 10_000 });
    aliceId = alice.id;

    const standby = await stack.startHub({ authenticator: openRegistration() });
    await failOver(open, standby);
    serving = standby;
    // The new hub learned the identity and its key from the registry in KV (hydrate), not from memory.
    const { credentials } = await asAlice.call('renewCredentials', {}, { caller: alice.id });
    const before = decode<User>(alice.credentials.jwt);
    const after = decode<User>(credentials.jwt);
    expect(after.sub).toBe(alice.keys.publicKey);
    expect(after.iss).toBe(before.iss);
    expect(after.nats.pub).toEqual(before.nats.pub);
    const renewed = new HubRpc(await connectAs(credentials, alice.keys), { prefix: stack.prefix, retryForMs: 10_000 });
    await renewed.call('setSkill', { skill_md: '# alice' }, { caller: alice.id });
    expect((await asAlice.call('getSkill', { agent_id: alice.id })).skill_md).toBe('# alice');
  });

  it('NATS closes a connection whose JWT lapses and refuses the JWT from then on', async () => {
    const shortLived = await stack.startHub({
      authenticator: openRegistration(),
      credentials: { ...stack.issuer, ttlSeconds: 2 },
    });
    await failOver(serving, shortLived);
    serving = shortLived;
    const bob = await register('bob');
    const claims = decode<User>(bob.credentials.jwt);
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(2);
    const nc = await connectAs(bob.credentials, bob.keys);
    // The server ends the connection when the JWT lapses; nothing here waits on a timer of its own.
    // (Which error nats.js reports last depends on timing: the expiry itself, or its refused reconnect.)
    expect(await nc.closed()).toBeInstanceOf(Error);
    expect(nc.isClosed()).toBe(true);
    // NATS compares whole seconds: past the second of `exp`, a new connection with the JWT is refused outright (the
    // same credentials connected above, so the refusal is the lapse).
    const exp = claims.exp ?? 0;
    await waitFor(() => Date.now() >= (exp + 1) * 1000, { timeoutMs: 5_000, what: 'the second after exp' });
    await expect(connectAs(bob.credentials, bob.keys)).rejects.toThrow('Authorization Violation');
  });

  it('leaves out an identity whose stored key is malformed: a new hub issues it nothing', async () => {
    const admin = await connectWithCreds({ url: stack.url, creds: stack.adminCreds });
    opened.push(admin);
    const kv = await new Kvm(admin).open(stack.names.agentsBucket);
    await kv.put(`${aliceId}.nkey`, JSON.stringify({ public_key: 'not-a-key' }));
    const next = await stack.startHub({ authenticator: openRegistration() });
    await failOver(serving, next);
    serving = next;
    expect(next.health().quarantined).toBe(1);
    expect(await failure(asAlice.call('renewCredentials', {}, { caller: aliceId }))).toMatchObject({
      code: 'access_denied',
    });
  });
});

describe('a hub that issues no credentials', () => {
  let hub: Hub;
  let nc: NatsConnection;
  let open: HubRpc;

  beforeAll(async () => {
    const prefix = uniqueName('open');
    hub = await startHub({ servers: plain.url, prefix, sweepIntervalMs: 0 });
    nc = await connect({ servers: plain.url });
    open = new HubRpc(nc, { prefix, retryForMs: 5_000 });
  });

  afterAll(async () => {
    await hub?.close();
    await nc?.close();
  });

  it('answers credentials null and refuses attach and renewal, saying it issues none', async () => {
    const keys = createIdentityKeys();
    const { passport, credentials } = await open.call('register', {
      passport: { name: 'carol' },
      public_key: keys.publicKey,
    });
    expect(credentials).toBeNull();
    const refusal = {
      code: 'invalid_request',
      message: 'this hub issues no credentials (its NATS has no per-identity auth): connect without credentials',
    };
    expect(await failure(open.call('attach', { name_or_id: 'carol', public_key: keys.publicKey }))).toEqual(refusal);
    expect(await failure(open.call('renewCredentials', {}, { caller: passport.agent_id ?? '' }))).toEqual(refusal);
  });
});
