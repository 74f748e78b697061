/**
 * A hub on a real nats-server 2.9 in operator mode, configured by `authInit`: the hub-service user runs the hub,
 * identities hold credentials issued for their own public keys, and every attack of one identity on another, on the
 * WAL, the inboxes, the buckets or the JetStream API is refused by NATS itself.
 */
import {
  AuthFile,
  authInit,
  createIdentityKeys,
  credsFile,
  hubServiceInboxPrefix,
  identityInboxPrefix,
  issueIdentityCredentials,
  operatorCallerInboxPrefix,
  pushAccountJwt,
  registrantInboxPrefix,
  revokeUser,
  type AuthLayout,
} from '@ag2net/auth';
import { startHub, type Hub } from '@ag2net/hub';
import {
  EV_CHANNEL_INVITE,
  EV_CHANNEL_INVITE_ACK,
  EV_TEXT,
  EnvelopeSchema,
  OPERATOR_CALLER,
  hubNames,
  type HubNames,
} from '@ag2net/protocol';
import {
  ViolationRecorder,
  connectWithCreds,
  startSecuredNatsServer,
  uniqueName,
  within,
  type NatsServer,
} from '@ag2net/test-support';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { createAccount } from '@nats-io/nkeys';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { call } from './support.js';

const PassportReply = z.looseObject({ passport: z.looseObject({ agent_id: z.string() }) });

/** A registered identity with its own keys and connection. */
interface Identity {
  readonly id: string;
  readonly publicKey: string;
  readonly seed: string;
  readonly creds: string;
  readonly nc: NatsConnection;
  readonly violations: ViolationRecorder;
}

let dir: string;
let auth: AuthLayout;
let server: NatsServer;
let names: HubNames;
let hub: Hub;
let hubNc: NatsConnection;
/** Every permissions violation on the hub-service connections: only the ones the tests provoke on purpose. */
const hubViolations: ViolationRecorder[] = [];
let registrant: NatsConnection;
let admin: NatsConnection | null = null;
let alice: Identity;
let bob: Identity;
const opened: NatsConnection[] = [];

const credsOf = (file: AuthFile): Promise<string> => readFile(auth.path(file), 'utf8');

/** The admin's connection, opened in `beforeAll`. */
function hubAdmin(): NatsConnection {
  if (admin === null) throw new Error('no admin connection');
  return admin;
}

async function issueFor(
  agentId: string,
  seedless: { publicKey: string; seed: string },
  nowMs?: number,
): Promise<string> {
  const { jwt } = await issueIdentityCredentials({
    accountPublicKey: auth.manifest.identity_account.public_key,
    accountSigningSeed: (await readFile(auth.path(AuthFile.identityAccountSigningSeed), 'utf8')).trim(),
    identityPublicKey: seedless.publicKey,
    agentId,
    names,
    ttlSeconds: 600,
    ...(nowMs === undefined ? {} : { nowMs }),
  });
  return jwt;
}

async function registerIdentity(name: string): Promise<Identity> {
  const { passport } = PassportReply.parse(await call(registrant, names.rpc('register'), { passport: { name } }));
  const keys = createIdentityKeys();
  const jwt = await issueFor(passport.agent_id, keys);
  const creds = credsFile(jwt, keys.seed);
  const nc = await connectWithCreds({ url: server.url, creds, inboxPrefix: identityInboxPrefix(passport.agent_id) });
  opened.push(nc);
  return {
    id: passport.agent_id,
    publicKey: keys.publicKey,
    seed: keys.seed,
    creds,
    nc,
    violations: new ViolationRecorder(nc),
  };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ag2net-auth-'));
  const prefix = uniqueName('sec');
  names = hubNames(prefix);
  auth = await authInit({ dir, prefix });
  server = await startSecuredNatsServer({ authDir: dir });
  hubNc = await connectWithCreds({
    url: server.url,
    creds: await credsOf(AuthFile.hubServiceCreds),
    inboxPrefix: hubServiceInboxPrefix(names),
  });
  hubViolations.push(new ViolationRecorder(hubNc));
  hub = await startHub({ connection: hubNc, prefix, sweepIntervalMs: 0 });
  // The hub is active once startHub resolves; the flush makes sure its RPC subscriptions reached the server.
  await hubNc.flush();
  registrant = await connectWithCreds({
    url: server.url,
    creds: await credsOf(AuthFile.registrantCreds),
    inboxPrefix: registrantInboxPrefix(names),
  });
  admin = await connectWithCreds({ url: server.url, creds: await credsOf(AuthFile.adminCreds) });
  opened.push(admin);
  alice = await registerIdentity('alice');
  bob = await registerIdentity('bob');
});

afterAll(async () => {
  for (const nc of opened) await nc.close();
  await registrant?.close();
  await hub?.close();
  await hubNc?.close();
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('the hub-service user', () => {
  it('provisions the hub and serves it', async () => {
    expect(hub.role).toBe('active');
    const health = z.looseObject({ role: z.string(), registered_agents: z.number() });
    expect(health.parse(await call(registrant, names.rpc('health'), {}))).toMatchObject({
      role: 'active',
      registered_agents: 2,
    });
  });

  it('may not delete a stream nor read an identity reply inbox', async () => {
    const recorder = hubViolations[0];
    if (recorder === undefined) throw new Error('no recorder on the hub connection');
    const del = `$JS.API.STREAM.DELETE.${names.walStream}`;
    expect(await recorder.refused(del, () => hubNc.request(del, '', { timeout: 1_000 }))).toEqual({
      operation: 'publish',
      subject: del,
    });
    const replies = `${identityInboxPrefix(alice.id)}.>`;
    expect(await recorder.refused(replies, () => hubNc.subscribe(replies))).toEqual({
      operation: 'subscription',
      subject: replies,
    });
  });
});

describe('an identity user', () => {
  it('calls its own operations and the public directory', async () => {
    expect(await call(alice.nc, names.rpc('pendingTurnsFor', alice.id), {})).toEqual({ turns: [] });
    expect(await call(alice.nc, names.rpc('findAgentId', undefined), { name: 'bob' })).toEqual({ agent_id: bob.id });
  });

  it('opens a channel with another identity, each reading only its own inbox', async () => {
    const created = call(alice.nc, names.rpc('createChannel', alice.id), {
      type: 'conversation',
      participants: [bob.id],
    });
    const bobInbox = await jetstream(bob.nc).consumers.get(names.inboxStream, names.inboxConsumer(bob.id));
    const invite = await bobInbox.next({ expires: 5_000 });
    if (invite === null) throw new Error('no invite reached bob');
    const envelope = EnvelopeSchema.parse(JSON.parse(invite.string()));
    expect(envelope.event_type).toBe(EV_CHANNEL_INVITE);
    expect(envelope.audience).toEqual([bob.id]);
    await invite.ackAck();
    await call(bob.nc, names.rpc('post', bob.id), {
      channel_id: envelope.channel_id,
      sender_id: bob.id,
      audience: [alice.id],
      event_type: EV_CHANNEL_INVITE_ACK,
      causation_id: envelope.envelope_id,
    });
    const channel = z.looseObject({ channel: z.looseObject({ channel_id: z.string(), state: z.string() }) });
    expect(channel.parse(await created).channel).toMatchObject({ channel_id: envelope.channel_id, state: 'active' });

    await call(alice.nc, names.rpc('post', alice.id), {
      channel_id: envelope.channel_id,
      sender_id: alice.id,
      event_type: EV_TEXT,
      event_data: { text: 'hello bob' },
    });
    // The rest is read as the SDK reads an inbox: consumer info, then a continuous pull with heartbeats.
    expect((await bobInbox.info()).config.durable_name).toBe(names.inboxConsumer(bob.id));
    const texts: string[] = [];
    const messages = await bobInbox.consume({ max_messages: 8 });
    for await (const m of messages) {
      const e = EnvelopeSchema.parse(JSON.parse(m.string()));
      m.ack();
      if (e.event_type === EV_TEXT) texts.push(`${e.sender_id}: ${String(e.event_data['text'])}`);
      if (texts.length > 0) break;
    }
    expect(texts).toEqual([`${alice.id}: hello bob`]);
    // Nothing of this needed a right the identities lack.
    expect([alice.violations.seen, bob.violations.seen]).toEqual([[], []]);
  });
});

describe('reads the hub serves from its streams', () => {
  it("a participant reads the channel's WAL through the hub, and the operator lists every channel", async () => {
    const channels = z.looseObject({ channels: z.array(z.looseObject({ channel_id: z.string() })) });
    const list = channels.parse(await call(hubAdmin(), names.rpc('listChannels', OPERATOR_CALLER), {}));
    const channelId = list.channels[0]?.channel_id;
    if (channelId === undefined) throw new Error('no channel');
    const wal = z.looseObject({ envelopes: z.array(z.looseObject({ event_type: z.string() })) });
    const read = wal.parse(await call(bob.nc, names.rpc('readWal', bob.id), { channel_id: channelId }));
    expect(read.envelopes.map((e) => e.event_type)).toContain(EV_TEXT);
  });

  it('the admin reads the audit trail through the hub as the operator caller', async () => {
    const audit = z.looseObject({ records: z.array(z.unknown()) });
    const read = audit.parse(await call(hubAdmin(), names.rpc('readAudit', OPERATOR_CALLER), {}));
    expect(read.records.length).toBeGreaterThan(0);
  });
});

describe('attacks by an identity are refused by NATS', () => {
  const refusedPublish = async (subject: string, data = '{}'): Promise<void> => {
    expect(await alice.violations.refused(subject, () => alice.nc.publish(subject, data))).toEqual({
      operation: 'publish',
      subject,
    });
  };
  const refusedSubscribe = async (subject: string): Promise<void> => {
    expect(await alice.violations.refused(subject, () => alice.nc.subscribe(subject))).toEqual({
      operation: 'subscription',
      subject,
    });
  };

  it('posting as another identity', async () => {
    const subject = names.rpc('post', bob.id);
    expect(
      await alice.violations.refused(subject, () =>
        alice.nc.request(subject, JSON.stringify({ channel_id: 'c', sender_id: bob.id, event_type: EV_TEXT }), {
          timeout: 1_000,
        }),
      ),
    ).toEqual({ operation: 'publish', subject });
  });

  it('posting on a routed subject as itself only, never as another identity or the operator', async () => {
    // Where a deployment of 4 partitions sends the operations about a channel of partition 3: `….post.3.<caller>`.
    const routed = hubNames(names.prefix, 4);
    // The admin, in the data account, sees what crosses the identity account's `rpc` import to partition 3.
    const crossed = hubAdmin().subscribe(routed.rpcListenIn('post', 3), { max: 2 });
    await hubAdmin().flush();
    const subjects = (async () => {
      const seen: string[] = [];
      for await (const m of crossed) seen.push(m.subject);
      return seen;
    })();
    const caller = await connectWithCreds({
      url: server.url,
      creds: await credsOf(AuthFile.operatorCallerCreds),
      inboxPrefix: operatorCallerInboxPrefix(names),
    });
    opened.push(caller);
    const callerViolations = new ViolationRecorder(caller);
    const before = alice.violations.seen.length;

    alice.nc.publish(routed.rpcIn('post', 3, alice.id), '{}');
    await alice.nc.flush();
    caller.publish(routed.rpcIn('post', 3, OPERATOR_CALLER), '{}');
    await caller.flush();
    expect(await within(subjects, 2_000, 'the routed posts in the data account')).toEqual([
      `${names.prefix}.hub.v1.post.3.${alice.id}`,
      `${names.prefix}.hub.v1.post.3.$operator`,
    ]);

    await refusedPublish(routed.rpcIn('post', 3, bob.id));
    await refusedPublish(routed.rpcIn('post', 3, OPERATOR_CALLER));
    expect(alice.violations.seen.slice(before)).toEqual([
      { operation: 'publish', subject: `${names.prefix}.hub.v1.post.3.${bob.id}` },
      { operation: 'publish', subject: `${names.prefix}.hub.v1.post.3.$operator` },
    ]);
    const asAlice = routed.rpcIn('post', 3, alice.id);
    expect(await callerViolations.refused(asAlice, () => caller.publish(asAlice, '{}'))).toEqual({
      operation: 'publish',
      subject: asAlice,
    });
  });

  it('unregistering another identity', () => refusedPublish(names.rpc('unregister', bob.id)));

  it('reading channel content through an operation that names no caller', () =>
    refusedPublish(names.rpc('adapterState'), JSON.stringify({ channel_id: 'c' })));

  it('appending to the WAL', () => refusedPublish(names.wal('x')));

  it("writing to another identity's inbox subject", () => refusedPublish(names.inbox(bob.id)));

  it('subscribing to the shared reply inbox', () => refusedSubscribe('_INBOX.>'));

  it("subscribing to another identity's reply inbox", () => refusedSubscribe(`${identityInboxPrefix(bob.id)}.>`));

  it("subscribing to another identity's inbox or the WAL", async () => {
    await refusedSubscribe(names.inbox(bob.id));
    await refusedSubscribe(names.walAll);
  });

  it("pulling another identity's inbox consumer", () =>
    refusedPublish(`$JS.API.CONSUMER.MSG.NEXT.${names.inboxStream}.${names.inboxConsumer(bob.id)}`));

  it('creating a consumer on the inbox stream', async () => {
    await refusedPublish(`$JS.API.CONSUMER.CREATE.${names.inboxStream}`);
    await refusedPublish(`$JS.API.CONSUMER.CREATE.${names.inboxStream}.steal.${names.inbox(bob.id)}`);
    await refusedPublish(`$JS.API.CONSUMER.DURABLE.CREATE.${names.inboxStream}.steal`);
  });

  it('reading a KV bucket', async () => {
    await refusedPublish(`$JS.API.DIRECT.GET.KV_${names.agentsBucket}.$KV.${names.agentsBucket}.${bob.id}.passport`);
    await refusedPublish(`$JS.API.DIRECT.GET.KV_${names.channelsBucket}`);
    await refusedPublish(`$JS.API.STREAM.MSG.GET.KV_${names.agentsBucket}`);
    await refusedPublish(`$JS.API.STREAM.MSG.GET.${names.walStream}`);
  });

  it('writing a KV bucket, the lease included', async () => {
    await refusedPublish(`$KV.${names.agentsBucket}.${bob.id}.rule`);
    await refusedPublish(`$KV.${names.leasesBucket}.active`);
    await refusedPublish(`$KV.${names.turnLocksBucket}.${bob.id}.c`);
  });

  it('managing streams and consumers', async () => {
    await refusedPublish(`$JS.API.STREAM.CREATE.${names.walStream}`);
    await refusedPublish(`$JS.API.STREAM.PURGE.${names.inboxStream}`);
    await refusedPublish(`$JS.API.STREAM.DELETE.${names.walStream}`);
    await refusedPublish(`$JS.API.CONSUMER.DELETE.${names.inboxStream}.${names.inboxConsumer(bob.id)}`);
    await refusedPublish(`$JS.API.STREAM.INFO.${names.walStream}`);
  });

  it('acking on another identity consumer', () =>
    refusedPublish(`$JS.ACK.${names.inboxStream}.${names.inboxConsumer(bob.id)}.1.1.1.0.0`));
});

describe('connections refused by NATS', () => {
  const authError = /Authorization Violation|authorization violation/i;

  it('no credentials', async () => {
    await expect(connect({ servers: server.url, maxReconnectAttempts: 0 })).rejects.toThrow(authError);
  });

  it('an expired user JWT', async () => {
    const keys = createIdentityKeys();
    const jwt = await issueFor(alice.id, keys, Date.now() - 3_600_000);
    await expect(connectWithCreds({ url: server.url, creds: credsFile(jwt, keys.seed) })).rejects.toThrow(authError);
  });

  it("another identity's JWT without its seed", async () => {
    const jwt = await issueFor(bob.id, createIdentityKeys());
    await expect(connectWithCreds({ url: server.url, creds: credsFile(jwt, alice.seed) })).rejects.toThrow(authError);
  });

  it('a JWT signed by a key that is not the account signing key', async () => {
    const keys = createIdentityKeys();
    // An attacker's own account key, presented as the hub account's signer: not among its signing keys.
    const rogue = new TextDecoder().decode(createAccount().getSeed());
    const { jwt } = await issueIdentityCredentials({
      accountPublicKey: auth.manifest.identity_account.public_key,
      accountSigningSeed: rogue,
      identityPublicKey: keys.publicKey,
      agentId: alice.id,
      names,
    });
    await expect(connectWithCreds({ url: server.url, creds: credsFile(jwt, keys.seed) })).rejects.toThrow(authError);
  });
});

describe('the admin user', () => {
  it('reads the WAL but may not append to it', async () => {
    const jsm = await jetstreamManager(hubAdmin());
    const info = await jsm.streams.info(names.walStream);
    expect(info.state.messages).toBeGreaterThan(0);
    const recorder = new ViolationRecorder(hubAdmin());
    const subject = names.wal('x');
    expect(await recorder.refused(subject, () => hubAdmin().publish(subject, '{}'))).toEqual({
      operation: 'publish',
      subject,
    });
  });
});

describe('a hub restarted with the hub-service user', () => {
  it('hydrates from the registry, the channels and the WAL, and serves', async () => {
    await hub.close();
    await hubNc.close();
    hubNc = await connectWithCreds({
      url: server.url,
      creds: await credsOf(AuthFile.hubServiceCreds),
      inboxPrefix: hubServiceInboxPrefix(names),
    });
    hubViolations.push(new ViolationRecorder(hubNc));
    hub = await startHub({ connection: hubNc, prefix: names.prefix, sweepIntervalMs: 0 });
    await hubNc.flush();
    const health = z.looseObject({ role: z.string(), registered_agents: z.number(), active_channels: z.number() });
    expect(health.parse(await call(alice.nc, names.rpc('health'), {}))).toMatchObject({
      role: 'active',
      registered_agents: 2,
      active_channels: 1,
    });
  });

  it('met no permissions violation but the ones provoked on purpose', () => {
    expect(hubViolations.map((r) => r.seen)).toEqual([
      [
        { operation: 'publish', subject: `$JS.API.STREAM.DELETE.${names.walStream}` },
        { operation: 'subscription', subject: `${identityInboxPrefix(alice.id)}.>` },
      ],
      [],
    ]);
  });
});

describe('revocation', () => {
  it('a revoked identity is cut off at once and refused when it comes back', async () => {
    const carol = await registerIdentity('carol');
    const carolKey = carol.publicKey;
    const revoked = await revokeUser({ dir, userPublicKey: carolKey });
    expect(revoked.manifest.revocations.identity[carolKey]).toBeTypeOf('number');
    const system = await connectWithCreds({ url: server.url, creds: await credsOf(AuthFile.systemUserCreds) });
    opened.push(system);
    const closed = carol.nc.closed();
    await pushAccountJwt(system, revoked);
    // The server closes the revoked user's connection; the client reports why it closed.
    expect(String(await closed)).toBe('AuthorizationError: Authorization Violation');
    await expect(connectWithCreds({ url: server.url, creds: carol.creds })).rejects.toThrow(/Authorization Violation/i);
  });
});
