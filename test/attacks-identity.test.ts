/**
 * Attacks on a secured stack by an identity the hub admitted and issued credentials to (mallory), refused by NATS or
 * by the hub with a typed error, each leaving the WAL, the inboxes, every KV bucket and every durable consumer as
 * they were: taking over another identity's name, reading or posting into a channel it is not in, holding a turn
 * lock there, slipping a forged `remote_agent` admission claim into the directory, and coming back with expired or
 * revoked credentials.
 */
import {
  AuthFile,
  createIdentityKeys,
  credsFile,
  issueIdentityCredentials,
  pushAccountJwt,
  revokeUser,
} from '@ag2net/auth';
import { HubClient, HubRpc, type HumanClient } from '@ag2net/client';
import { EV_TEXT, NetworkError, type IssuedCredentials } from '@ag2net/protocol';
import { connectWithCreds } from '@ag2net/test-support';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSecuredStack, type SecuredStack } from './support/secured-stack.js';
import { settledStore, storeState, type StoreState } from './support/store-state.js';
import { ViolationRecorder } from './support/violations.js';

const KEYS = { alice: 'k-alice', bob: 'k-bob', mallory: 'k-mallory', relay: 'k-relay', trudy: 'k-trudy' };
const apiKey = (token: string) => ({ scheme: 'api_key', claim: { token } });

/** An identity on a raw connection of its own issued credentials: only NATS permissions decide what it reaches. */
interface RawIdentity {
  readonly id: string;
  readonly publicKey: string;
  readonly seed: string;
  readonly credentials: IssuedCredentials;
  readonly nc: NatsConnection;
  readonly rpc: HubRpc;
  readonly violations: ViolationRecorder;
}

let stack: SecuredStack;
let hub: HubClient;
let registrant: HubRpc;
let admin: NatsConnection;
let alice: HumanClient;
let bob: HumanClient;
let mallory: RawIdentity;
let channelId: string;
let textId: string;
let settled: StoreState;
const opened: NatsConnection[] = [];

async function raw(name: keyof typeof KEYS): Promise<RawIdentity> {
  const keys = createIdentityKeys();
  const { passport, credentials } = await registrant.call('register', {
    passport: { name, auth: apiKey(KEYS[name]) },
    public_key: keys.publicKey,
  });
  if (credentials === null || passport.agent_id === null) throw new Error('the secured hub issued no credentials');
  const nc = await connectWithCreds({
    url: stack.url,
    creds: credsFile(credentials.jwt, keys.seed),
    inboxPrefix: credentials.inbox_prefix,
  });
  opened.push(nc);
  return {
    id: passport.agent_id,
    publicKey: keys.publicKey,
    seed: keys.seed,
    credentials,
    nc,
    rpc: new HubRpc(nc, { prefix: stack.prefix, retryForMs: 0 }),
    violations: new ViolationRecorder(nc),
  };
}

/** The wire code and message a call failed with. */
async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof NetworkError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('expected the call to fail');
}

beforeAll(async () => {
  // A lease far longer than this file, and no sweeps: the hub writes nothing of its own while the attacks run.
  stack = await startSecuredStack({ apiKeys: KEYS, hub: { leaseTtlMs: 600_000, sweepIntervalMs: 0 } });
  hub = await HubClient.connect({ servers: stack.url, prefix: stack.prefix, creds: stack.registrantCreds });
  registrant = new HubRpc(hub.nc, { prefix: stack.prefix, retryForMs: 5_000 });
  admin = await connectWithCreds({ url: stack.url, creds: stack.adminCreds });
  opened.push(admin);
  alice = await hub.registerHuman({ name: 'alice', auth: apiKey(KEYS.alice) });
  bob = await hub.registerHuman({ name: 'bob', auth: apiKey(KEYS.bob) });
  mallory = await raw('mallory');

  const channel = await alice.open({ type: 'conversation', target: 'bob' });
  channelId = channel.channelId;
  textId = await channel.send('for bob only');
  await bob.waitForChannelEvent(channelId, { timeout: 10_000, predicate: (e) => e.envelope_id === textId });
  settled = await settledStore(admin, stack.names, { channels: 1, inboxesDrained: true });
}, 60_000);

afterAll(async () => {
  await alice?.disconnect();
  await bob?.disconnect();
  await hub?.close();
  for (const nc of opened) if (!nc.isClosed()) await nc.close();
  await stack?.stop();
});

describe('attacks by an admitted identity', () => {
  it('unregistering another identity and taking its name', async () => {
    const subject = stack.names.rpc('unregister', bob.agentId);
    expect(await mallory.violations.refused(subject, () => mallory.nc.request(subject, '{}'))).toEqual({
      operation: 'publish',
      subject,
    });
    // The name with mallory's own key: her API key is not bob's, and bob's (leaked) key does not free the name.
    const mine = createIdentityKeys().publicKey;
    expect(
      await failure(
        registrant.call('register', { passport: { name: 'bob', auth: apiKey(KEYS.mallory) }, public_key: mine }),
      ),
    ).toEqual({ code: 'auth_failed', message: "admission refused for 'bob'" });
    expect(
      await failure(
        registrant.call('register', { passport: { name: 'bob', auth: apiKey(KEYS.bob) }, public_key: mine }),
      ),
    ).toEqual({
      code: 'protocol_error',
      message: `name 'bob' already registered (agent_id=${bob.agentId}); unregister it before re-registering.`,
    });
    expect(
      await failure(registrant.call('attach', { name_or_id: 'bob', public_key: mine, auth: apiKey(KEYS.bob) })),
    ).toEqual({ code: 'auth_failed', message: "public_key does not match the key 'bob' registered with" });
    expect(await storeState(admin, stack.names)).toEqual(settled);
    expect((await bob.hub.getAgent('bob')).agent_id).toBe(bob.agentId);
  });

  it('reading a channel it is not in, through every read that names a channel', async () => {
    const as = { caller: mallory.id };
    // Answered exactly as a channel that does not exist: it learns not even that there is one.
    const noChannel = { code: 'not_found', message: `channel not found: ${channelId}` };
    expect(await failure(mallory.rpc.call('getChannel', { channel_id: channelId }, as))).toEqual(noChannel);
    expect(await failure(mallory.rpc.call('readWal', { channel_id: channelId }, as))).toEqual(noChannel);
    expect(await failure(mallory.rpc.call('adapterState', { channel_id: channelId }, as))).toEqual(noChannel);
    expect(
      await failure(
        mallory.rpc.call(
          'findEnvelopeByCausation',
          { channel_id: channelId, sender_id: bob.agentId, causation_id: textId },
          as,
        ),
      ),
    ).toEqual(noChannel);
    expect((await mallory.rpc.call('listChannels', {}, as)).channels).toEqual([]);
    expect(await storeState(admin, stack.names)).toEqual(settled);
  });

  it('posting into a channel it is not in, and holding a turn lock there', async () => {
    const as = { caller: mallory.id };
    const post = { channel_id: channelId, sender_id: mallory.id, event_type: EV_TEXT, event_data: { text: 'hi' } };
    // Refused as AG2 refuses a non-participant's send, and never admitted.
    expect(await failure(mallory.rpc.call('post', post, as))).toMatchObject({ code: 'protocol_error' });
    // Posting as bob on its own subject is the hub's to refuse: the sender must be the caller.
    const forged = { ...post, sender_id: bob.agentId };
    expect(await failure(mallory.rpc.call('post', forged, as))).toEqual({
      code: 'auth_failed',
      message: `sender_id '${bob.agentId}' does not match the caller '${mallory.id}'`,
    });
    expect(
      await failure(mallory.rpc.call('acquireTurnLock', { channel_id: channelId, holder: mallory.id }, as)),
    ).toMatchObject({ code: 'access_denied' });
    expect(await storeState(admin, stack.names)).toEqual(settled);
  });

  it('a forged remote_agent admission claim is refused, and an admitted one is never shown', async () => {
    const relay = createIdentityKeys().publicKey;
    // A remote agent is admitted under its owner's key: 'relay' owns itself here.
    const forged = { name: 'relay', kind: 'remote_agent' as const, owner: 'relay', auth: apiKey('k-guessed') };
    expect(await failure(registrant.call('register', { passport: forged, public_key: relay }))).toEqual({
      code: 'auth_failed',
      message: "owner 'relay' is not allowed to register remote agents",
    });
    expect(await storeState(admin, stack.names)).toEqual(settled);
    const listed = async () => (await mallory.rpc.call('listAgents', { kind: 'remote_agent' })).agents;
    expect(await listed()).toEqual([]);

    await registrant.call('register', { passport: { ...forged, auth: apiKey(KEYS.relay) }, public_key: relay });
    const [shown, ...more] = await listed();
    expect(more).toEqual([]);
    expect(shown?.auth.claim).toEqual({});
    const byName = await mallory.rpc.call('getAgent', { name_or_id: 'relay' });
    expect(JSON.stringify([shown, byName])).not.toContain(KEYS.relay);
    const kv = await new Kvm(admin).open(stack.names.agentsBucket);
    for await (const key of await kv.keys()) expect((await kv.get(key))?.string()).not.toContain(KEYS.relay);
    settled = await storeState(admin, stack.names);
  });

  it('credentials that expired are refused, and an open connection is closed when they expire', async () => {
    const keys = createIdentityKeys();
    const issue = (nowMs: number) =>
      issueIdentityCredentials({
        accountPublicKey: stack.issuer.accountPublicKey,
        accountSigningSeed: stack.issuer.signingSeed,
        identityPublicKey: keys.publicKey,
        agentId: mallory.id,
        names: stack.names,
        ttlSeconds: 60,
        nowMs,
      });
    const expired = await issue(Date.now() - 3_600_000);
    await expect(connectWithCreds({ url: stack.url, creds: credsFile(expired.jwt, keys.seed) })).rejects.toThrow(
      /Authorization Violation/i,
    );
    // Issued 55 s ago for 60 s: it connects, and the server ends the connection when the JWT lapses.
    const lapsing = await issue(Date.now() - 55_000);
    const nc = await connectWithCreds({
      url: stack.url,
      creds: credsFile(lapsing.jwt, keys.seed),
      inboxPrefix: mallory.credentials.inbox_prefix,
    });
    opened.push(nc);
    const said: string[] = [];
    void (async () => {
      for await (const s of nc.status()) if (s.type === 'error') said.push(String(s.error));
    })();
    // The server says why before it closes the connection (what the client then reports as the reason varies).
    await nc.closed();
    expect(said[0]).toBe('UserAuthenticationExpiredError: User Authentication Expired');
    expect(await storeState(admin, stack.names)).toEqual(settled);
  });

  it('an unregistered identity is refused at once by the hub, and a revoked one by NATS', async () => {
    const trudy = await raw('trudy');
    const before = await storeState(admin, stack.names);
    await trudy.rpc.call('unregister', {}, { caller: trudy.id });
    const after = await storeState(admin, stack.names);
    // Its inbox consumer is gone; nothing else moved but its registry entries.
    expect(after.consumers[`${stack.names.inboxStream}/${stack.names.inboxConsumer(trudy.id)}`]).toBeUndefined();
    expect(after.streams[stack.names.walStream]).toEqual(before.streams[stack.names.walStream]);
    const as = { caller: trudy.id };
    expect(await failure(trudy.rpc.call('renewCredentials', {}, as))).toMatchObject({ code: 'access_denied' });
    expect(
      await failure(trudy.rpc.call('createChannel', { type: 'conversation', participants: [bob.agentId] }, as)),
    ).toMatchObject({ code: 'access_denied' });
    expect(await storeState(admin, stack.names)).toEqual(after);

    // The operator revokes its key: NATS closes the connection it still holds and refuses it from then on.
    const revoked = await revokeUser({ dir: stack.authDir, userPublicKey: trudy.publicKey });
    const system = await connectWithCreds({
      url: stack.url,
      creds: await readFile(stack.auth.path(AuthFile.systemUserCreds), 'utf8'),
    });
    opened.push(system);
    const closed = trudy.nc.closed();
    await pushAccountJwt(system, revoked);
    expect(String(await closed)).toBe('AuthorizationError: Authorization Violation');
    await expect(
      connectWithCreds({ url: stack.url, creds: credsFile(trudy.credentials.jwt, trudy.seed) }),
    ).rejects.toThrow(/Authorization Violation/i);
    expect(await storeState(admin, stack.names)).toEqual(after);
  });
});
