/**
 * Attacks by holders of real credentials on a secured hub, each refused by NATS itself (a permissions violation on
 * the attacker's connection) and each leaving the WAL, the inboxes, every KV bucket and every durable consumer as
 * they were. The hub runs with `hub-service.creds` on a nats-server in operator mode laid out by `authInit`; alice
 * and bob hold identity credentials issued for their own keys, with a channel between them and an envelope waiting
 * in bob's inbox.
 */
import {
  AuthFile,
  authInit,
  createIdentityKeys,
  credsFile,
  hubServiceInboxPrefix,
  identityInboxPrefix,
  issueIdentityCredentials,
  registrantInboxPrefix,
  type AuthLayout,
} from '@ag2net/auth';
import { startHub, type Hub } from '@ag2net/hub';
import {
  EV_CHANNEL_INVITE,
  EV_CHANNEL_INVITE_ACK,
  EV_TEXT,
  HUB_OP_NAMES,
  hubNames,
  type HubNames,
} from '@ag2net/protocol';
import { connectWithCreds, startSecuredNatsServer, uniqueName, type NatsServer } from '@ag2net/test-support';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { rawCall, takeInboxEnvelope } from './support/raw-rpc.js';
import { settledStore, storeState, type StoreState } from './support/store-state.js';
import { ViolationRecorder } from './support/violations.js';

/** A registered identity on its own connection. */
interface Identity {
  readonly id: string;
  readonly nc: NatsConnection;
  readonly violations: ViolationRecorder;
}

const IdentityReply = z.looseObject({ passport: z.looseObject({ agent_id: z.string() }) });

let dir: string;
let auth: AuthLayout;
let server: NatsServer;
let names: HubNames;
let hubNc: NatsConnection;
let hub: Hub;
let admin: NatsConnection;
let registrant: NatsConnection;
let registrantViolations: ViolationRecorder;
let alice: Identity;
let bob: Identity;
let channelId: string;
/** The store once the setup settled: every attack is compared with it. */
let settled: StoreState;
const opened: NatsConnection[] = [];

const call = rawCall;

async function open(creds: string, inboxPrefix?: string): Promise<NatsConnection> {
  const nc = await connectWithCreds({ url: server.url, creds, ...(inboxPrefix === undefined ? {} : { inboxPrefix }) });
  opened.push(nc);
  return nc;
}

/** Registers `name` through the registrant and connects with credentials issued for a fresh key of its own. */
async function identity(name: string): Promise<Identity> {
  const { passport } = IdentityReply.parse(await call(registrant, names.rpc('register'), { passport: { name } }));
  const keys = createIdentityKeys();
  const { jwt } = await issueIdentityCredentials({
    accountPublicKey: auth.manifest.identity_account.public_key,
    accountSigningSeed: (await readFile(auth.path(AuthFile.identityAccountSigningSeed), 'utf8')).trim(),
    identityPublicKey: keys.publicKey,
    agentId: passport.agent_id,
    names,
    ttlSeconds: 600,
  });
  const nc = await open(credsFile(jwt, keys.seed), identityInboxPrefix(passport.agent_id));
  return { id: passport.agent_id, nc, violations: new ViolationRecorder(nc) };
}

const creds = (file: AuthFile): Promise<string> => readFile(join(dir, file), 'utf8');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ag2net-attacks-'));
  const prefix = uniqueName('atk');
  names = hubNames(prefix);
  auth = await authInit({ dir, prefix });
  server = await startSecuredNatsServer({ authDir: dir });
  hubNc = await connectWithCreds({
    url: server.url,
    creds: await creds(AuthFile.hubServiceCreds),
    inboxPrefix: hubServiceInboxPrefix(names),
  });
  // A lease far longer than this file, and no sweeps: the hub writes nothing of its own while the attacks run.
  hub = await startHub({ connection: hubNc, prefix, sweepIntervalMs: 0, leaseTtlMs: 600_000 });
  await hubNc.flush();
  admin = await open(await creds(AuthFile.adminCreds));
  registrant = await open(await creds(AuthFile.registrantCreds), registrantInboxPrefix(names));
  registrantViolations = new ViolationRecorder(registrant);
  alice = await identity('alice');
  bob = await identity('bob');

  // A conversation: alice invites bob, bob accepts, alice says something bob has not read yet.
  const created = call(alice.nc, names.rpc('createChannel', alice.id), {
    type: 'conversation',
    participants: [bob.id],
  });
  const envelope = await takeInboxEnvelope(bob.nc, names, bob.id);
  expect(envelope.event_type).toBe(EV_CHANNEL_INVITE);
  channelId = envelope.channel_id;
  await call(bob.nc, names.rpc('post', bob.id), {
    channel_id: channelId,
    sender_id: bob.id,
    audience: [alice.id],
    event_type: EV_CHANNEL_INVITE_ACK,
    causation_id: envelope.envelope_id,
  });
  await created;
  await call(alice.nc, names.rpc('post', alice.id), {
    channel_id: channelId,
    sender_id: alice.id,
    event_type: EV_TEXT,
    event_data: { text: 'for bob only' },
  });
  // Settled: the hub delivered every WAL entry and wrote the channel's idle snapshot; bob reads nothing more.
  settled = await settledStore(admin, names, { channels: 1 });
});

afterAll(async () => {
  for (const nc of opened) await nc.close();
  await hub?.close();
  await hubNc?.close();
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Each attack: the violation NATS reports for exactly its subject, and the store exactly as it was. */
async function refusedPublish(who: Identity, subject: string, data = '{}'): Promise<void> {
  expect(await who.violations.refused(subject, () => who.nc.publish(subject, data))).toEqual({
    operation: 'publish',
    subject,
  });
}

async function refusedRequest(who: Identity, subject: string, body: unknown): Promise<void> {
  expect(
    await who.violations.refused(subject, () => who.nc.request(subject, JSON.stringify(body), { timeout: 1_000 })),
  ).toEqual({ operation: 'publish', subject });
}

async function refusedSubscribe(who: Identity, subject: string): Promise<void> {
  expect(await who.violations.refused(subject, () => who.nc.subscribe(subject))).toEqual({
    operation: 'subscription',
    subject,
  });
}

describe('attacks refused by NATS leave the WAL, the inboxes and KV unchanged', () => {
  it('a setup with a channel, its WAL and an unread delivery', () => {
    // The invite, its ack, the channel's opening and alice's text.
    expect(settled.streams[names.walStream]?.messages).toBe(4);
    // Bob read the invite; the opening and the text wait.
    expect(settled.consumers[`${names.inboxStream}/${names.inboxConsumer(bob.id)}`]).toMatchObject({
      delivered: 1,
      num_pending: 2,
    });
  });

  it('posting as another identity on its subject', async () => {
    await refusedRequest(alice, names.rpc('post', bob.id), {
      channel_id: channelId,
      sender_id: bob.id,
      event_type: EV_TEXT,
      event_data: { text: 'forged' },
    });
    expect(await storeState(admin, names)).toEqual(settled);
  });

  it("calling any other operation on another identity's subject", async () => {
    for (const op of HUB_OP_NAMES) await refusedRequest(alice, names.rpc(op, bob.id), { channel_id: channelId });
    expect(await storeState(admin, names)).toEqual(settled);
  });

  it("appending straight onto the channel's WAL subject", async () => {
    const forged = {
      envelope_id: 'forged',
      channel_id: channelId,
      sender_id: bob.id,
      event_type: EV_TEXT,
      event_data: { text: 'forged' },
    };
    await refusedPublish(alice, names.wal(channelId), JSON.stringify(forged));
    expect(await storeState(admin, names)).toEqual(settled);
  });

  it("publishing on another identity's inbox subject, and on one's own", async () => {
    await refusedPublish(alice, names.inbox(bob.id));
    await refusedPublish(alice, names.inbox(alice.id));
    expect(await storeState(admin, names)).toEqual(settled);
  });

  it('creating a consumer on the inbox stream', async () => {
    const steal = { stream_name: names.inboxStream, config: { filter_subject: names.inbox(bob.id) } };
    await refusedRequest(alice, `$JS.API.CONSUMER.CREATE.${names.inboxStream}`, steal);
    await refusedRequest(alice, `$JS.API.CONSUMER.CREATE.${names.inboxStream}.steal.${names.inbox(bob.id)}`, steal);
    await refusedRequest(alice, `$JS.API.CONSUMER.DURABLE.CREATE.${names.inboxStream}.steal`, steal);
    expect(await storeState(admin, names)).toEqual(settled);
  });

  it("pulling from, reading the info of and acking on another identity's consumer", async () => {
    const consumer = names.inboxConsumer(bob.id);
    await refusedRequest(alice, `$JS.API.CONSUMER.MSG.NEXT.${names.inboxStream}.${consumer}`, { batch: 1 });
    await refusedRequest(alice, `$JS.API.CONSUMER.INFO.${names.inboxStream}.${consumer}`, {});
    await refusedPublish(alice, `$JS.ACK.${names.inboxStream}.${consumer}.1.4.4.0.0`, '');
    expect(await storeState(admin, names)).toEqual(settled);
  });

  it('reading streams and buckets directly', async () => {
    await refusedRequest(alice, `$JS.API.STREAM.MSG.GET.${names.inboxStream}`, { seq: 1 });
    await refusedRequest(alice, `$JS.API.DIRECT.GET.${names.walStream}`, { seq: 1 });
    await refusedRequest(
      alice,
      `$JS.API.DIRECT.GET.KV_${names.agentsBucket}.$KV.${names.agentsBucket}.${bob.id}.passport`,
      {},
    );
    expect(await storeState(admin, names)).toEqual(settled);
  });

  it("writing KV: another identity's passport and rule, a channel's metadata, tasks, turn locks, the lease", async () => {
    await refusedPublish(alice, `$KV.${names.agentsBucket}.${bob.id}.passport`, JSON.stringify({ name: 'bob' }));
    await refusedPublish(alice, `$KV.${names.agentsBucket}.${bob.id}.rule`, '{}');
    await refusedPublish(alice, `$KV.${names.agentsBucket}.${alice.id}.rule`, '{}');
    await refusedPublish(alice, `$KV.${names.channelsBucket}.${channelId}`, '{}');
    await refusedPublish(alice, `$KV.${names.tasksBucket}.meta.t1`, '{}');
    await refusedPublish(alice, `$KV.${names.leasesBucket}.active`, 'attacker');
    await refusedPublish(alice, `$KV.${names.turnLocksBucket}.${bob.id}.${channelId}`, alice.id);
    await refusedPublish(alice, `$KV.${names.snapshotsBucket}.${channelId}`, '{}');
    await refusedPublish(alice, `$KV.${names.cursorsBucket}.${names.deliveryConsumer}`, '0');
    expect(await storeState(admin, names)).toEqual(settled);
    expect(hub.role).toBe('active');
  });

  it("subscribing to the shared reply inbox or another identity's reply prefix", async () => {
    await refusedSubscribe(alice, '_INBOX.>');
    await refusedSubscribe(alice, `${identityInboxPrefix(bob.id)}.>`);
    await refusedSubscribe(alice, `${hubServiceInboxPrefix(names)}.>`);
    await refusedSubscribe(alice, `${registrantInboxPrefix(names)}.>`);
    await refusedSubscribe(alice, `${names.prefix}.hub.v1.>`);
    await refusedSubscribe(alice, names.inbox(bob.id));
    await refusedSubscribe(alice, names.walAll);
    expect(await storeState(admin, names)).toEqual(settled);
  });

  it('managing streams and consumers', async () => {
    for (const stream of [names.walStream, names.inboxStream, `KV_${names.agentsBucket}`, `KV_${names.leasesBucket}`]) {
      for (const verb of ['CREATE', 'UPDATE', 'PURGE', 'DELETE', 'INFO', 'MSG.DELETE'])
        await refusedRequest(alice, `$JS.API.STREAM.${verb}.${stream}`, {});
    }
    await refusedRequest(alice, `$JS.API.CONSUMER.DELETE.${names.inboxStream}.${names.inboxConsumer(bob.id)}`, {});
    await refusedRequest(alice, `$JS.API.CONSUMER.DELETE.${names.inboxStream}.${names.inboxConsumer(alice.id)}`, {});
    await refusedRequest(alice, `$JS.API.CONSUMER.DELETE.${names.walStream}.${names.deliveryConsumer}`, {});
    await refusedRequest(alice, '$JS.API.STREAM.LIST', {});
    await refusedRequest(alice, '$JS.API.ACCOUNT.PURGE', {});
    expect(await storeState(admin, names)).toEqual(settled);
  });

  it('the registrant calling anything but register, attach and health', async () => {
    const as: Identity = { id: 'registrant', nc: registrant, violations: registrantViolations };
    for (const op of HUB_OP_NAMES) {
      if (op === 'register' || op === 'attach' || op === 'health') continue;
      await refusedRequest(as, names.rpc(op), {});
      await refusedRequest(as, names.rpc(op, bob.id), { channel_id: channelId });
    }
    await refusedPublish(as, names.wal(channelId));
    await refusedPublish(as, names.inbox(bob.id));
    await refusedPublish(as, `$KV.${names.leasesBucket}.active`, 'attacker');
    await refusedSubscribe(as, '_INBOX.>');
    await refusedRequest(as, `$JS.API.CONSUMER.MSG.NEXT.${names.inboxStream}.${names.inboxConsumer(bob.id)}`, {});
    expect(await storeState(admin, names)).toEqual(settled);
  });

  it("probing the hub's presence subject, with the reply aimed at the lease key", async () => {
    const presence = names.hubAlive(hub.hubId);
    const leaseKey = `$KV.${names.leasesBucket}.active`;
    const lease = async (): Promise<number | null> => {
      const jsm = await jetstreamManager(admin);
      const m = await jsm.streams.getMessage(`KV_${names.leasesBucket}`, { last_by_subj: leaseKey });
      return m === null ? null : m.seq;
    };
    const leaseBefore = await lease();
    expect(leaseBefore).not.toBeNull();
    // Identities and the registrant may not publish there at all.
    await refusedPublish(alice, presence);
    await refusedPublish(alice, names.hubAliveAll.replace('*', 'other-hub'));
    const as: Identity = { id: 'registrant', nc: registrant, violations: registrantViolations };
    await refusedPublish(as, presence);
    // A holder of the hub's own credentials (another hub instance) may probe; the hub never answers a probe, so no
    // reply subject, the lease key's or the WAL's, is ever published to.
    const peer = await open(await creds(AuthFile.hubServiceCreds), hubServiceInboxPrefix(names));
    const answers = peer.subscribe(`${hubServiceInboxPrefix(names)}.probe.>`);
    for (const reply of [leaseKey, names.wal(channelId), `$KV.${names.agentsBucket}.${bob.id}.passport`]) {
      for (let i = 0; i < 50; i += 1) peer.publish(presence, 'attacker', { reply });
    }
    peer.publish(presence, '', { reply: `${hubServiceInboxPrefix(names)}.probe.1` });
    await peer.flush();
    await hubNc.flush();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(answers.getReceived()).toBe(0);
    expect(await lease()).toBe(leaseBefore);
    expect(await storeState(admin, names)).toEqual(settled);
    expect(hub.role).toBe('active');
  });

  it('a control: what an identity may do moves the store, so each comparison above could fail', async () => {
    await call(alice.nc, names.rpc('post', alice.id), {
      channel_id: channelId,
      sender_id: alice.id,
      event_type: EV_TEXT,
      event_data: { text: 'a second line' },
    });
    const after = await storeState(admin, names);
    expect(after.streams[names.walStream]?.last_seq).toBe((settled.streams[names.walStream]?.last_seq ?? 0) + 1);
    expect(after).not.toEqual(settled);
    // Nothing of the setup or of this post needed a right the identities lack.
    expect(bob.violations.seen).toEqual([]);
  });
});
