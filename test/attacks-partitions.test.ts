/**
 * Forged reply subjects on a partitioned secured hub (4 partitions, one hub holding them all). A responder publishes
 * its answer wherever the request's reply subject points, with the responder's rights, so each request below is sent
 * raw with a reply aimed at the hub's data: a purge and a deletion of a stream, a partition's lease key, the WAL
 * subject of a channel, the audit trail, another identity's durable inbox, and that identity's reply prefix. The
 * requests take every path a partitioned hub answers on: a channel operation sent without a partition (answered by
 * the home partition's owner with the unrouted refusal), one sent to a partition its channel is not in (the
 * other-partition refusal), reads sent to their own partition, and home operations. They come from an admitted
 * identity and the registrant (the identity account: the server rewrites their replies into ones it minted) and from
 * the operator's user of the data account (whose reply reaches the hub as it was sent, so the hub's own check is all
 * that stands between it and the data; that user may not write the WAL, the inboxes or the lease itself).
 *
 * Afterwards every stream's message count and sequences, every durable consumer, each partition's lease revision and
 * the audit trail are exactly as before, the other identity's reply prefix got only answers the requester itself
 * would have had, and the hub still admits a routed post.
 */
import { createIdentityKeys, credsFile, registrantInboxPrefix } from '@ag2net/auth';
import {
  AuditKind,
  EV_CHANNEL_INVITE,
  EV_CHANNEL_INVITE_ACK,
  EV_TEXT,
  RpcReplySchema,
  hubNames,
  newId,
  type HubNames,
} from '@ag2net/protocol';
import { connectWithCreds, waitFor } from '@ag2net/test-support';
import { jetstreamManager } from '@nats-io/jetstream';
import type { Msg, NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { rawCall, takeInboxEnvelope } from './support/raw-rpc.js';
import { startSecuredStack, type SecuredStack } from './support/secured-stack.js';
import { storeState, type StoreState } from './support/store-state.js';
import { ViolationRecorder } from './support/violations.js';

/** The deployment's partition count. */
const P = 4;
/** The partition of the attacked channel: not the home partition, so its WAL subject and lease key are not 0's. */
const CHANNEL_PARTITION = 1;

/** An identity on a raw connection of the credentials the hub issued to it. */
interface Identity {
  readonly id: string;
  readonly inboxPrefix: string;
  readonly nc: NatsConnection;
}

/** One raw request: where it goes and what it carries. */
interface Request {
  readonly subject: string;
  readonly body: string;
}

const IssuedSchema = z.looseObject({
  passport: z.looseObject({ agent_id: z.string() }),
  credentials: z.looseObject({ jwt: z.string(), inbox_prefix: z.string() }),
});
const FailureSchema = z.object({
  ok: z.literal(false),
  error: z.looseObject({ code: z.string(), message: z.string() }),
});

let stack: SecuredStack;
let names: HubNames;
let admin: NatsConnection;
let registrant: NatsConnection;
let registrantViolations: ViolationRecorder;
let alice: Identity;
let bob: Identity;
let channelId: string;
/** Requests the hub answered and dropped unanswered since it started (the unrouted refusal reports neither). */
const counts = { answered: 0, dropped: 0 };
const dropReasons: string[] = [];
/** Whatever reaches bob's reply prefix once the setup is done. */
const reachedBob: Msg[] = [];
/** The store, each partition's lease and the audit trail once the setup settled: every attack is compared with it. */
let settled: Snapshot;
const opened: NatsConnection[] = [];

/** An RPC over a raw connection: its result, or a thrown `<code>: <message>`. */
function call(nc: NatsConnection, subject: string, body: unknown): Promise<unknown> {
  return rawCall(nc, subject, body, 10_000);
}

/** The error a request sent on the requester's own inbox is answered with. */
async function refusal(nc: NatsConnection, request: Request): Promise<{ code: string; message: string }> {
  const msg = await nc.request(request.subject, request.body, { timeout: 10_000 });
  const { error } = FailureSchema.parse(JSON.parse(msg.string()));
  return { code: error.code, message: error.message };
}

async function open(creds: string, inboxPrefix?: string): Promise<NatsConnection> {
  const nc = await connectWithCreds({ url: stack.url, creds, ...(inboxPrefix === undefined ? {} : { inboxPrefix }) });
  opened.push(nc);
  return nc;
}

/** Registers `name` through the registrant with a fresh key and connects with the credentials the hub issued. */
async function identity(name: string): Promise<Identity> {
  const keys = createIdentityKeys();
  const issued = IssuedSchema.parse(
    await call(registrant, names.rpc('register'), { passport: { name }, public_key: keys.publicKey }),
  );
  const { jwt, inbox_prefix: inboxPrefix } = issued.credentials;
  const nc = await open(credsFile(jwt, keys.seed), inboxPrefix);
  return { id: issued.passport.agent_id, inboxPrefix, nc };
}

/** A fresh channel id in partition `k`. */
function channelIdIn(k: number): string {
  for (;;) {
    const id = newId();
    if (names.partitionOf(id) === k) return id;
  }
}

/** What the attacks must leave as it is. */
interface Snapshot {
  readonly store: StoreState;
  /** Each partition's lease key: its revision and value. */
  readonly leases: readonly { readonly seq: number; readonly value: string }[];
  readonly audit: { readonly messages: number; readonly lastSeq: number };
}

async function snapshot(): Promise<Snapshot> {
  const jsm = await jetstreamManager(admin);
  const leases = await Promise.all(
    Array.from({ length: P }, async (_, k) => {
      const entry = await jsm.streams.getMessage(`KV_${names.leasesBucket}`, {
        last_by_subj: `$KV.${names.leasesBucket}.${names.leaseKey(k)}`,
      });
      if (entry === null) throw new Error(`no lease of partition ${k}`);
      return { seq: entry.seq, value: entry.string() };
    }),
  );
  const audit = (await jsm.streams.info(names.auditStream)).state;
  return {
    store: await storeState(admin, names),
    leases,
    audit: { messages: audit.messages, lastSeq: audit.last_seq },
  };
}

/**
 * The store once the hub's own work settled: every partition's delivery consumer delivered and acked all it has, and
 * the channel's idle snapshot is written. With sweeps off and a lease longer than the file, nothing moves by itself
 * from then on.
 */
function settledSnapshot(): Promise<Snapshot> {
  return waitFor(
    async () => {
      const state = await snapshot();
      const delivered = Array.from({ length: P }, (_, k) => {
        const c = state.store.consumers[`${names.walStream}/${names.deliveryConsumerOf(k)}`];
        return c !== undefined && c.num_pending === 0 && c.num_ack_pending === 0;
      });
      const snapshotted = state.store.streams[`KV_${names.snapshotsBucket}`]?.messages === 1;
      return delivered.every(Boolean) && snapshotted && state;
    },
    { what: 'the hub to settle (deliveries acked, the snapshot written)', timeoutMs: 15_000 },
  );
}

/** Every reply subject aimed at the hub's data; bob's reply prefix is `bobReplyPrefix`. */
function dataTargets(): string[] {
  return [
    `$JS.API.STREAM.PURGE.${names.walStream}`,
    `$JS.API.STREAM.DELETE.${names.walStream}`,
    `$JS.API.STREAM.PURGE.${names.inboxStream}`,
    `$JS.API.STREAM.DELETE.KV_${names.leasesBucket}`,
    `$KV.${names.leasesBucket}.${names.leaseKey(0)}`,
    `$KV.${names.leasesBucket}.${names.leaseKey(CHANNEL_PARTITION)}`,
    names.wal(channelId),
    names.audit(AuditKind.ChannelCreated),
    names.inbox(bob.id),
  ];
}

/** A subject under bob's reply prefix, the only one bob's credentials let him subscribe to. */
const bobReplyPrefix = (): string => `${bob.inboxPrefix}.forged`;

/** A post into the attacked channel as `sender`. */
const postBody = (sender: string): string =>
  JSON.stringify({ channel_id: channelId, sender_id: sender, event_type: EV_TEXT, event_data: { text: 'forged' } });

/** A partition the attacked channel is not in. */
const WRONG_PARTITION = (CHANNEL_PARTITION + 1) % P;

/** A post sent without a partition, as a client that does not route would send it. */
const unroutedPost = (caller: string): Request => ({ subject: names.rpc('post', caller), body: postBody(caller) });

/** Channel operations of `caller` sent without a partition: the home partition's owner refuses each. */
function unrouted(caller: string): Request[] {
  return [
    unroutedPost(caller),
    { subject: names.rpc('readWal', caller), body: JSON.stringify({ channel_id: channelId }) },
    { subject: names.rpc('listChannels', caller), body: JSON.stringify({ agent_id: caller }) },
  ];
}

/** The post sent to a partition the channel is not in: that partition's owner refuses it. */
const misrouted = (caller: string): Request => ({
  subject: names.rpcIn('post', WRONG_PARTITION, caller),
  body: postBody(caller),
});

/** Routed reads of `caller`, answered and writing nothing: the channel's WAL in its partition, each partition's channels. */
function routedReads(caller: string): Request[] {
  return [
    { subject: names.rpcIn('readWal', CHANNEL_PARTITION, caller), body: JSON.stringify({ channel_id: channelId }) },
    ...Array.from({ length: P }, (_, k) => ({
      subject: names.rpcIn('listChannels', k, caller),
      body: JSON.stringify({ agent_id: caller }),
    })),
  ];
}

/** Home operations: `health`, and `listTasks` as `caller`. */
function home(caller: string): Request[] {
  return [
    { subject: names.rpc('health'), body: '{}' },
    { subject: names.rpc('listTasks', caller), body: '{}' },
  ];
}

/** Sends each request once with each reply subject, then flushes. */
async function sendForged(nc: NatsConnection, requests: readonly Request[], replies: readonly string[]): Promise<void> {
  for (const { subject, body } of requests) for (const reply of replies) nc.publish(subject, body, { reply });
  await nc.flush();
}

/**
 * Waits until the hub answered or dropped `total` more requests than `from` (the unrouted refusal reports neither),
 * and says how many of each.
 */
async function hubTook(
  from: { readonly answered: number; readonly dropped: number },
  total: number,
): Promise<{ answered: number; dropped: number }> {
  const took = () => ({ answered: counts.answered - from.answered, dropped: counts.dropped - from.dropped });
  await waitFor(() => took().answered + took().dropped >= total, {
    what: `the hub to take ${total} requests`,
    timeoutMs: 20_000,
  });
  return took();
}

beforeAll(async () => {
  stack = await startSecuredStack({
    openRegistration: true,
    hub: {
      partitions: P,
      // A lease far longer than this file, and no sweeps: the hub writes nothing of its own while the attacks run.
      leaseTtlMs: 600_000,
      sweepIntervalMs: 0,
      observer: {
        requestFinished: () => void (counts.answered += 1),
        requestDropped: ({ reason }) => {
          counts.dropped += 1;
          dropReasons.push(reason);
        },
      },
    },
  });
  names = hubNames(stack.prefix, P);
  admin = await open(stack.adminCreds);
  registrant = await open(stack.registrantCreds, registrantInboxPrefix(names));
  registrantViolations = new ViolationRecorder(registrant);
  alice = await identity('alice');
  bob = await identity('bob');

  // A conversation in partition 1: alice invites bob, bob accepts, alice says something bob has not read yet.
  channelId = channelIdIn(CHANNEL_PARTITION);
  const created = call(alice.nc, names.rpcIn('createChannel', CHANNEL_PARTITION, alice.id), {
    channel_id: channelId,
    type: 'conversation',
    participants: [bob.id],
  });
  const envelope = await takeInboxEnvelope(bob.nc, names, bob.id);
  expect([envelope.event_type, envelope.channel_id]).toEqual([EV_CHANNEL_INVITE, channelId]);
  await call(bob.nc, names.rpcIn('post', CHANNEL_PARTITION, bob.id), {
    channel_id: channelId,
    sender_id: bob.id,
    audience: [alice.id],
    event_type: EV_CHANNEL_INVITE_ACK,
    causation_id: envelope.envelope_id,
  });
  await created;
  await call(alice.nc, names.rpcIn('post', CHANNEL_PARTITION, alice.id), {
    channel_id: channelId,
    sender_id: alice.id,
    event_type: EV_TEXT,
    event_data: { text: 'for bob only' },
  });
  settled = await settledSnapshot();
  // Bob makes no request of his own from now on: whatever reaches his reply prefix was aimed at it.
  bob.nc.subscribe(`${bob.inboxPrefix}.>`, { callback: (err, msg) => void (err === null && reachedBob.push(msg)) });
  await bob.nc.flush();
}, 60_000);

afterAll(async () => {
  for (const nc of opened) if (!nc.isClosed()) await nc.close();
  await stack?.stop();
});

describe('forged reply subjects on a partitioned secured hub', () => {
  it('a setup with one hub holding every partition and a channel of partition 1 with an unread delivery', () => {
    expect(stack.hub.health()).toMatchObject({ partitions: P, held: [0, 1, 2, 3].map((k) => ({ partition: k })) });
    expect(names.wal(channelId)).toBe(`${stack.prefix}.wal.${CHANNEL_PARTITION}.${channelId}`);
    // The invite, its ack, the channel's opening and alice's text.
    expect(settled.store.streams[names.walStream]?.messages).toBe(4);
    // Bob read the invite; the opening and the text wait.
    expect(settled.store.consumers[`${names.inboxStream}/${names.inboxConsumer(bob.id)}`]).toMatchObject({
      delivered: 1,
      num_pending: 2,
      num_ack_pending: 0,
    });
    expect(settled.leases.map((l) => l.value)).toEqual(Array.from({ length: P }, () => stack.hub.hubId));
  });

  it('an identity asking on its own inbox gets invalid_request for an unrouted and a misrouted channel operation', async () => {
    expect(await refusal(alice.nc, unroutedPost(alice.id))).toEqual({
      code: 'invalid_request',
      message:
        "post must be sent to its partition's subject, <prefix>.hub.v1.post.<partition>.<caller>: " +
        `this deployment's channels are spread over ${P} partitions (Health.partitions)`,
    });
    expect(await refusal(alice.nc, misrouted(alice.id))).toEqual({
      code: 'invalid_request',
      message:
        `channel ${channelId} is in partition ${CHANNEL_PARTITION}, not ${WRONG_PARTITION}: ` +
        `send post to ${names.rpcIn('post', CHANNEL_PARTITION, '<caller>')}`,
    });
    expect(await snapshot()).toEqual(settled);
  });

  it('the registrant may send no channel operation, routed or not: NATS refuses it', async () => {
    const [reply = ''] = dataTargets();
    for (const { subject, body } of [...unrouted(alice.id), misrouted(alice.id), ...routedReads(alice.id)]) {
      expect(await registrantViolations.refused(subject, () => registrant.publish(subject, body, { reply }))).toEqual({
        operation: 'publish',
        subject,
      });
    }
    expect(await snapshot()).toEqual(settled);
  });

  it("no reply subject an identity or the registrant names reaches the data; another identity's reply prefix gets only the requester's own answers", async () => {
    reachedBob.length = 0;
    const from = { ...counts };
    const replies = [...dataTargets(), bobReplyPrefix()];
    const aliceAnswered = [misrouted(alice.id), ...routedReads(alice.id), ...home(alice.id)];
    const registrantAnswered = [{ subject: names.rpc('health'), body: '{}' }];
    await sendForged(alice.nc, unrouted(alice.id), replies);
    await sendForged(alice.nc, aliceAnswered, replies);
    await sendForged(registrant, registrantAnswered, replies);
    const answered = (aliceAnswered.length + registrantAnswered.length) * replies.length;
    const took = await hubTook(from, answered);
    // The unrouted refusal answers as each request arrives, in order: once this one is answered, all before it were.
    expect((await refusal(alice.nc, unroutedPost(alice.id))).code).toBe('invalid_request');
    await bob.nc.flush();

    expect(await snapshot()).toEqual(settled);
    // Each reached the hub with a reply the server minted, so the hub answered each; the server took the answers
    // back into the identity account, where no subject of the data is.
    expect(took).toEqual({ answered, dropped: 0 });
    // An answer aimed at bob's reply prefix does reach bob's connection: nats-server delivers it onto the reply the
    // requester named, in the requester's account, and the hub only ever sees the reply the server minted
    // (docs/security.md, "Where every reply lands"). What lands there is the answer the requester would have got
    // itself (the refusals of its unrouted and misrouted requests, the reads it may make), on a subject no request
    // of bob's waits on (a client's replies go to `<inbox prefix>.<random token>…`).
    const landed = reachedBob.map((m) => {
      const reply = RpcReplySchema.parse(JSON.parse(m.string()));
      return { subject: m.subject, outcome: reply.ok ? 'ok' : reply.error.code };
    });
    const each = (n: number, outcome: string) =>
      Array.from({ length: n }, () => ({ subject: bobReplyPrefix(), outcome }));
    expect(landed.sort((a, b) => a.outcome.localeCompare(b.outcome))).toEqual([
      ...each(unrouted(alice.id).length + 1, 'invalid_request'),
      ...each(aliceAnswered.length - 1 + registrantAnswered.length, 'ok'),
    ]);
  });

  it("the data account's own user gets no answer on a reply subject that is not an inbox, so the hub writes nothing for it", async () => {
    reachedBob.length = 0;
    const from = { ...counts };
    // Bob's reply prefix is an inbox, so it is answered, but in the data account, where nobody listens there.
    const replies = [...dataTargets(), bobReplyPrefix()];
    const answerable = [misrouted(alice.id), ...routedReads(alice.id), ...home(alice.id)];
    await sendForged(admin, unrouted(alice.id), replies);
    await sendForged(admin, answerable, replies);
    const took = await hubTook(from, answerable.length * replies.length);
    // Asked on its own inbox, the same user gets the unrouted refusal: every forged one before it was taken.
    expect((await refusal(admin, unroutedPost(alice.id))).code).toBe('invalid_request');
    await bob.nc.flush();

    expect(await snapshot()).toEqual(settled);
    const jsm = await jetstreamManager(admin);
    const streams = [names.walStream, names.inboxStream, names.auditStream, `KV_${names.leasesBucket}`];
    expect(await Promise.all(streams.map(async (s) => (await jsm.streams.info(s)).config.name))).toEqual(streams);
    expect(reachedBob).toEqual([]);
    const dropped = answerable.length * dataTargets().length;
    expect(took).toEqual({ answered: answerable.length, dropped });
    expect(new Set(dropReasons.slice(-dropped))).toEqual(new Set(['reply subject is not an inbox']));
  });

  it('the hub still admits a routed post afterwards, and it reaches bob', async () => {
    await call(alice.nc, names.rpcIn('post', CHANNEL_PARTITION, alice.id), {
      channel_id: channelId,
      sender_id: alice.id,
      event_type: EV_TEXT,
      event_data: { text: 'still here' },
    });
    const bobKey = `${names.inboxStream}/${names.inboxConsumer(bob.id)}`;
    const state = await waitFor(
      async () => {
        const s = await storeState(admin, names);
        return s.consumers[bobKey]?.num_pending === 3 && s;
      },
      { what: "the post in bob's inbox", timeoutMs: 10_000 },
    );
    expect(state.streams[names.walStream]).toEqual({
      messages: 5,
      first_seq: settled.store.streams[names.walStream]?.first_seq,
      last_seq: (settled.store.streams[names.walStream]?.last_seq ?? 0) + 1,
    });
  });
});
