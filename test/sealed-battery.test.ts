/**
 * The confused-deputy battery: a responder publishes its answer wherever the requester's reply subject points, with
 * the responder's rights. Every caller of low privilege (an admitted identity, the registrant, the console's operator
 * caller) sends every request it may send — each hub operation it may call, each JetStream API call an identity may
 * make on its own inbox consumer — once with each reply subject an attacker would aim at the data: every stream's
 * and bucket's management API, every KV key that matters (the lease, a victim's passport and credentials, a channel,
 * a task), the WAL of a channel the attacker is not in, a victim's inbox and consumer, the audit trail, another
 * identity's reply prefix and other hub operations. Then every stream's message count and sequences, every durable
 * consumer and the lease are exactly as before, and the hub keeps serving.
 *
 * The same battery runs on one nats-server and on a 3-node cluster (R3), secured as `npm start` secures a stack: the
 * data in the data account, everyone above in the identity account (docs/security.md, "Accounts").
 */
import {
  AuthFile,
  authInit,
  createIdentityKeys,
  credsFile,
  hubServiceInboxPrefix,
  identityPermissions,
  operatorCallerInboxPrefix,
  operatorCallerPermissions,
  registrantInboxPrefix,
  registrantPermissions,
  type AuthLayout,
} from '@ag2net/auth';
import { apiKeyAuthenticator, startHub, type Hub } from '@ag2net/hub';
import {
  EV_CHANNEL_INVITE,
  EV_CHANNEL_INVITE_ACK,
  EV_TEXT,
  EnvelopeSchema,
  HUB_OPS,
  HUB_OP_NAMES,
  OPERATOR_CALLER,
  RpcReplySchema,
  hubNames,
  type HubNames,
  type Envelope,
  type HubOp,
} from '@ag2net/protocol';
import {
  connectWithCreds,
  startSecuredNatsCluster,
  startSecuredNatsServer,
  uniqueName,
  type NatsCluster,
  type NatsServer,
} from '@ag2net/test-support';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { settledStore, storeState, type StoreState } from './support/store-state.js';

const KEYS = { alice: 'k-alice-0123456789', bob: 'k-bob-0123456789', victim: 'k-victim-0123456789' } as const;
type Name = keyof typeof KEYS;

/** A party of low privilege on its own connection, with what its JWT lets it publish. */
interface Party {
  readonly nc: NatsConnection;
  readonly allow: readonly string[];
}

/** An identity of the battery. */
interface Identity extends Party {
  readonly id: string;
  /** Its reply-inbox prefix, the only one it may subscribe to. */
  readonly inboxPrefix: string;
}

/** One running battery: the stack and its parties. */
interface Battery {
  readonly names: HubNames;
  readonly admin: NatsConnection;
  readonly alice: Identity;
  readonly bob: Identity;
  readonly victim: Identity;
  readonly registrant: Party;
  readonly operatorCaller: Party;
  /** A conversation of alice and the victim, and one of bob and the victim that alice is not in. */
  readonly aliceChannel: string;
  readonly foreignChannel: string;
  /** The ack subject of a delivery alice acked already: acking it again with a reply asks the server to answer. */
  readonly aliceAckSubject: string;
  /** Requests the hub answered and dropped since it started. */
  readonly counts: { answered: number; dropped: number };
  readonly close: () => Promise<void>;
}

const IssuedSchema = z.looseObject({
  passport: z.looseObject({ agent_id: z.string() }),
  credentials: z.looseObject({ jwt: z.string(), inbox_prefix: z.string() }),
});

/** An RPC over a raw connection: its result, or a thrown `<code>: <message>`. */
async function call(nc: NatsConnection, subject: string, body: unknown): Promise<unknown> {
  const msg = await nc.request(subject, JSON.stringify(body), { timeout: 10_000 });
  const reply = RpcReplySchema.parse(JSON.parse(msg.string()));
  if (!reply.ok) throw new Error(`${reply.error.code}: ${reply.error.message}`);
  return reply.result;
}

/** Whether `subject` is in an allow list of NATS subjects (`*` one token, `>` the rest). */
function allowed(subject: string, allow: readonly string[]): boolean {
  const tokens = subject.split('.');
  return allow.some((pattern) => {
    const p = pattern.split('.');
    for (let i = 0; i < p.length; i += 1) {
      if (p[i] === '>') return tokens.length > i;
      if (i >= tokens.length || (p[i] !== '*' && p[i] !== tokens[i])) return false;
    }
    return p.length === tokens.length;
  });
}

async function setUp(topology: 'single' | 'cluster'): Promise<Battery> {
  const dir = await mkdtemp(join(tmpdir(), 'ag2net-battery-'));
  const prefix = uniqueName('seal');
  const names = hubNames(prefix);
  const auth: AuthLayout = await authInit({ dir, prefix });
  let server: NatsServer | null = null;
  let cluster: NatsCluster | null = null;
  let urls: string[];
  if (topology === 'single') {
    server = await startSecuredNatsServer({ authDir: dir });
    urls = [server.url];
  } else {
    cluster = await startSecuredNatsCluster({ authDir: dir });
    urls = cluster.urls;
  }
  const opened: NatsConnection[] = [];
  const open = async (creds: string, inboxPrefix?: string): Promise<NatsConnection> => {
    const nc = await connectWithCreds({
      url: urls[0] ?? '',
      urls,
      creds,
      ...(inboxPrefix === undefined ? {} : { inboxPrefix }),
    });
    opened.push(nc);
    return nc;
  };
  const file = (f: AuthFile): Promise<string> => readFile(join(dir, f), 'utf8');
  const hubNc = await open(await file(AuthFile.hubServiceCreds), hubServiceInboxPrefix(names));
  const counts = { answered: 0, dropped: 0 };
  const hub: Hub = await startHub({
    connection: hubNc,
    prefix,
    replicas: topology === 'single' ? 1 : 3,
    // A lease far longer than the battery, and no sweeps: the hub writes nothing of its own while it runs.
    sweepIntervalMs: 0,
    leaseTtlMs: 1_800_000,
    credentials: {
      accountPublicKey: auth.manifest.identity_account.public_key,
      signingSeed: (await file(AuthFile.identityAccountSigningSeed)).trim(),
    },
    authenticator: apiKeyAuthenticator({ keys: KEYS }),
    observer: {
      requestFinished: () => void (counts.answered += 1),
      requestDropped: () => void (counts.dropped += 1),
    },
  });
  await hubNc.flush();
  const admin = await open(await file(AuthFile.adminCreds));
  const registrantCreds = await file(AuthFile.registrantCreds);
  const registrant = {
    nc: await open(registrantCreds, registrantInboxPrefix(names)),
    allow: registrantPermissions(names).pub.allow,
  };
  const operatorCaller = {
    nc: await open(await file(AuthFile.operatorCallerCreds), operatorCallerInboxPrefix(names)),
    allow: operatorCallerPermissions(names).pub.allow,
  };

  const identity = async (name: Name): Promise<Identity> => {
    const keys = createIdentityKeys();
    const issued = IssuedSchema.parse(
      await call(registrant.nc, names.rpc('register'), {
        passport: { name, auth: { scheme: 'api_key', claim: { token: KEYS[name] } } },
        public_key: keys.publicKey,
      }),
    );
    const id = issued.passport.agent_id;
    const nc = await open(credsFile(issued.credentials.jwt, keys.seed), issued.credentials.inbox_prefix);
    return { id, nc, allow: identityPermissions(names, id).pub.allow, inboxPrefix: issued.credentials.inbox_prefix };
  };
  const alice = await identity('alice');
  const bob = await identity('bob');
  const victim = await identity('victim');

  /**
   * Pulls one delivery of `who` (raw, through the identity account's import), or `null` when none waits. A delivery
   * arrives with its stream subject, not the reply subject, so it is read on a subscription of its own.
   */
  let pulls = 0;
  const pull = async (who: Identity): Promise<{ data: string; ack: string } | null> => {
    pulls += 1;
    const inbox = `${who.inboxPrefix}.pull.${pulls}`;
    const sub = who.nc.subscribe(inbox, { max: 1 });
    const subject = `$JS.API.CONSUMER.MSG.NEXT.${names.inboxStream}.${names.inboxConsumer(who.id)}`;
    who.nc.publish(subject, JSON.stringify({ batch: 1, expires: 2_000_000_000 }), { reply: inbox });
    for await (const msg of sub) {
      if (msg.headers?.hasError === true || msg.data.length === 0) return null;
      return { data: msg.string(), ack: msg.reply ?? '' };
    }
    return null;
  };
  const conversation = async (opener: Identity, invitee: Identity): Promise<string> => {
    const created = call(opener.nc, names.rpc('createChannel', opener.id), {
      type: 'conversation',
      participants: [invitee.id],
    });
    // The invitee reads (and acks) what came before the invite, then the invite.
    let envelope: Envelope | null = null;
    while (envelope?.event_type !== EV_CHANNEL_INVITE) {
      const next = await pull(invitee);
      if (next === null) throw new Error('no invite reached the invitee');
      invitee.nc.publish(next.ack, '+ACK');
      envelope = EnvelopeSchema.parse(JSON.parse(next.data));
    }
    await call(invitee.nc, names.rpc('post', invitee.id), {
      channel_id: envelope.channel_id,
      sender_id: invitee.id,
      audience: [opener.id],
      event_type: EV_CHANNEL_INVITE_ACK,
      causation_id: envelope.envelope_id,
    });
    await created;
    return envelope.channel_id;
  };
  const say = (who: Identity, channel: string, text: string): Promise<unknown> =>
    call(who.nc, names.rpc('post', who.id), {
      channel_id: channel,
      sender_id: who.id,
      event_type: EV_TEXT,
      event_data: { text },
    });
  const aliceChannel = await conversation(alice, victim);
  const foreignChannel = await conversation(bob, victim);
  await say(alice, aliceChannel, 'for the victim');
  await say(bob, foreignChannel, 'not for alice');
  // Alice reads and acks everything addressed to her; the victim leaves its deliveries waiting.
  let aliceAckSubject = '';
  for (let next = await pull(alice); next !== null; next = await pull(alice)) {
    alice.nc.publish(next.ack, '+ACK');
    aliceAckSubject = next.ack;
  }
  await alice.nc.flush();
  if (aliceAckSubject === '') throw new Error('alice had no delivery to ack');

  const close = async (): Promise<void> => {
    for (const nc of opened.splice(0).reverse()) if (!nc.isClosed() && nc !== hubNc) await nc.close();
    await hub.close();
    await hubNc.close();
    await server?.stop();
    await cluster?.stop();
    await rm(dir, { recursive: true, force: true });
  };
  return {
    names,
    admin,
    alice,
    bob,
    victim,
    registrant,
    operatorCaller,
    aliceChannel,
    foreignChannel,
    aliceAckSubject,
    counts,
    close,
  };
}

/** Reads that change nothing: sent with a valid body. Every other operation gets a body its schema refuses. */
const READS: ReadonlySet<HubOp> = new Set<HubOp>([
  'getAgent',
  'getResume',
  'getSkill',
  'getRule',
  'findAgentId',
  'listAgents',
  'health',
  'getChannel',
  'listChannels',
  'readWal',
  'findEnvelopeByCausation',
  'canSend',
  'pendingTurnsFor',
  'adapterState',
  'getTask',
  'listTasks',
  'readTaskCheckpoint',
  'readAudit',
  'deliveryLag',
]);

/** A body of `op` that a hub answers without writing anything. */
function bodyOf(op: HubOp, b: Battery, caller: string): string {
  if (!READS.has(op)) return JSON.stringify({ battery: 'a body the schema refuses' });
  const channel = { channel_id: b.aliceChannel };
  const bodies: Partial<Record<HubOp, unknown>> = {
    getAgent: { name_or_id: 'victim' },
    getResume: { agent_id: b.victim.id },
    getSkill: { agent_id: b.victim.id },
    getRule: { agent_id: b.victim.id },
    findAgentId: { name: 'victim' },
    getChannel: channel,
    readWal: channel,
    findEnvelopeByCausation: { ...channel, sender_id: b.victim.id, causation_id: 'x' },
    canSend: channel,
    adapterState: channel,
    getTask: { task_id: b.victim.id },
    readTaskCheckpoint: { task_id: b.victim.id },
    listChannels: caller === OPERATOR_CALLER ? {} : { agent_id: caller },
  };
  return JSON.stringify(bodies[op] ?? {});
}

/** Every reply subject an attacker aims at the data with. */
function targets(b: Battery): string[] {
  const { names } = b;
  const streams = [names.walStream, names.inboxStream, names.auditStream, ...names.buckets.map((b) => `KV_${b}`)];
  const victimConsumer = names.inboxConsumer(b.victim.id);
  return [
    ...streams.flatMap((s) => [
      `$JS.API.STREAM.PURGE.${s}`,
      `$JS.API.STREAM.DELETE.${s}`,
      `$JS.API.STREAM.MSG.DELETE.${s}`,
      `$JS.API.STREAM.UPDATE.${s}`,
      `$JS.API.CONSUMER.CREATE.${s}`,
    ]),
    `$JS.API.CONSUMER.DELETE.${names.inboxStream}.${victimConsumer}`,
    `$JS.API.CONSUMER.DELETE.${names.walStream}.${names.deliveryConsumer}`,
    `$JS.API.CONSUMER.DURABLE.CREATE.${names.inboxStream}.${victimConsumer}`,
    `$JS.API.CONSUMER.MSG.NEXT.${names.inboxStream}.${victimConsumer}`,
    `$JS.API.CONSUMER.MSG.NEXT.${names.walStream}.${names.deliveryConsumer}`,
    `$JS.ACK.${names.inboxStream}.${victimConsumer}.1.1.1.0.0`,
    `$KV.${names.leasesBucket}.active`,
    `$KV.${names.agentsBucket}.${b.victim.id}.passport`,
    `$KV.${names.agentsBucket}.${b.victim.id}.credentials`,
    `$KV.${names.channelsBucket}.${b.foreignChannel}`,
    `$KV.${names.tasksBucket}.${b.victim.id}`,
    `$KV.${names.snapshotsBucket}.${b.foreignChannel}`,
    names.wal(b.foreignChannel),
    names.inbox(b.victim.id),
    `${names.prefix}.audit.agent_registered`,
    `_INBOX_${b.victim.id}.battery`,
    names.rpc('unregister', b.victim.id),
    names.rpc('post', b.victim.id),
    names.rpc('closeChannel', b.victim.id),
    names.hubsPing,
  ];
}

/** Every request of a party: each hub operation it may call, as itself (`caller`), with a body the hub answers. */
function hubRequests(b: Battery, party: Party, caller: string): { subject: string; body: string }[] {
  return HUB_OP_NAMES.flatMap((op) => {
    const subject = HUB_OPS[op].caller ? b.names.rpc(op, caller) : b.names.rpc(op);
    return allowed(subject, party.allow) ? [{ subject, body: bodyOf(op, b, caller) }] : [];
  });
}

/** The JetStream API calls an identity may make itself: on its own inbox consumer. */
function jetStreamRequests(b: Battery, who: Identity): { subject: string; body: string }[] {
  const consumer = `${b.names.inboxStream}.${b.names.inboxConsumer(who.id)}`;
  return [
    { subject: `$JS.API.CONSUMER.INFO.${consumer}`, body: '' },
    { subject: `$JS.API.CONSUMER.MSG.NEXT.${consumer}`, body: JSON.stringify({ batch: 1, no_wait: true }) },
    { subject: b.aliceAckSubject, body: '+ACK' },
  ];
}

/**
 * The state with every consumer that waits for no ack at its delivered sequence: that is its ack floor, which a
 * clustered consumer reports only once it next delivers (2.9.10).
 */
function acked(state: StoreState): StoreState {
  const consumers = Object.fromEntries(
    Object.entries(state.consumers).map(([name, c]) => [
      name,
      { ...c, ack_floor: c.num_ack_pending === 0 ? c.delivered : c.ack_floor },
    ]),
  );
  return { ...state, consumers };
}

/** The lease and the audit trail, which `storeState` leaves out or which may only grow. */
async function leaseAndAudit(b: Battery): Promise<{ lease: unknown; auditFirst: number; auditMessages: number }> {
  const jsm = await jetstreamManager(b.admin);
  const audit = await jsm.streams.info(b.names.auditStream);
  const lease = await jsm.streams.getMessage(`KV_${b.names.leasesBucket}`, {
    last_by_subj: `$KV.${b.names.leasesBucket}.active`,
  });
  return {
    lease: lease === null ? null : { seq: lease.seq, data: lease.string() },
    auditFirst: audit.state.first_seq,
    auditMessages: audit.state.messages,
  };
}

for (const topology of ['single', 'cluster'] as const) {
  describe(`the confused-deputy battery on ${topology === 'single' ? 'one nats-server' : 'a 3-node cluster'}`, () => {
    let b: Battery;
    let settled: StoreState;
    let before: Awaited<ReturnType<typeof leaseAndAudit>>;

    beforeAll(async () => {
      b = await setUp(topology);
      settled = acked(await settledStore(b.admin, b.names, { channels: 2, timeoutMs: 30_000 }));
      before = await leaseAndAudit(b);
    }, 120_000);

    afterAll(async () => {
      await b?.close();
    });

    it('a setup with two channels, their WALs and deliveries waiting in the victim’s inbox', () => {
      const victim = settled.consumers[`${b.names.inboxStream}/${b.names.inboxConsumer(b.victim.id)}`];
      // Two invites read and acked; what followed them in both channels waits, the texts among it.
      expect(victim?.num_ack_pending).toBe(0);
      expect(victim?.num_pending).toBeGreaterThanOrEqual(2);
      expect(settled.consumers[`${b.names.inboxStream}/${b.names.inboxConsumer(b.alice.id)}`]).toMatchObject({
        num_pending: 0,
        num_ack_pending: 0,
      });
    });

    it('no reply subject of any request reaches the data, and the hub keeps serving', async () => {
      const aim = targets(b);
      const parties: { party: Party; requests: { subject: string; body: string }[]; hub: number }[] = [];
      for (const who of [b.alice, b.bob]) {
        const rpc = hubRequests(b, who, who.id);
        parties.push({
          party: who,
          requests: [...rpc, ...(who === b.alice ? jetStreamRequests(b, who) : [])],
          hub: rpc.length,
        });
      }
      const registrantRpc = hubRequests(b, b.registrant, '');
      parties.push({ party: b.registrant, requests: registrantRpc, hub: registrantRpc.length });
      const operatorRpc = hubRequests(b, b.operatorCaller, OPERATOR_CALLER);
      const roster = { subject: b.names.hubsPing, body: '{}' };
      parties.push({ party: b.operatorCaller, requests: [...operatorRpc, roster], hub: operatorRpc.length + 1 });
      // Every operation each party may call is in the battery: not one of them is left out by its permissions.
      expect(parties[0]?.hub).toBe(HUB_OP_NAMES.filter((op) => HUB_OPS[op].caller).length + 8);
      expect(registrantRpc.map((r) => r.subject.split('.')[3]).sort()).toEqual(['attach', 'health', 'register']);
      expect(operatorRpc.filter((r) => r.subject.endsWith(`.${OPERATOR_CALLER}`)).length).toBe(
        HUB_OP_NAMES.filter((op) => HUB_OPS[op].caller).length,
      );

      const answeredBefore = b.counts.answered;
      let sent = 0;
      let toHub = 0;
      let withAckReply = 0;
      for (const { party, requests, hub } of parties) {
        for (const [index, { subject, body }] of requests.entries()) {
          for (const reply of aim) {
            party.nc.publish(subject, body, { reply });
            sent += 1;
            // The roster is not an operation (the last request of the operator caller); an ack subject as a reply
            // passes a service import unchanged (pull consumers across accounts need it), so such a request is not
            // one the hub may answer: nats-server drops it, or the hub drops it unanswered.
            if (index >= hub - (party === b.operatorCaller ? 1 : 0)) continue;
            if (reply.startsWith('$JS.ACK.')) withAckReply += 1;
            else toHub += 1;
          }
          if (sent % 250 < aim.length) await party.nc.flush();
        }
        await party.nc.flush();
      }
      expect(sent).toBeGreaterThan(8_000);
      await expect
        .poll(() => b.counts.answered - answeredBefore, { timeout: 90_000, interval: 250 })
        .toBeGreaterThanOrEqual(toHub);
      // Whatever the answers started, give it time to land.
      await sleep(1_000);
      expect(b.counts.answered - answeredBefore).toBe(toHub);
      expect(b.counts.dropped).toBeLessThanOrEqual(withAckReply);

      expect(acked(await storeState(b.admin, b.names))).toEqual(settled);
      const after = await leaseAndAudit(b);
      expect(after.lease).toEqual(before.lease);
      expect(after.auditFirst).toBe(before.auditFirst);
      expect(after.auditMessages).toBeGreaterThanOrEqual(before.auditMessages);

      // The hub serves on: alice speaks in her channel and the victim's inbox gets it.
      const health = z.looseObject({ role: z.string(), registered_agents: z.number() });
      expect(health.parse(await call(b.alice.nc, b.names.rpc('health'), {}))).toMatchObject({
        role: 'active',
        registered_agents: 3,
      });
      await call(b.alice.nc, b.names.rpc('post', b.alice.id), {
        channel_id: b.aliceChannel,
        sender_id: b.alice.id,
        event_type: EV_TEXT,
        event_data: { text: 'still here' },
      });
      const victimKey = `${b.names.inboxStream}/${b.names.inboxConsumer(b.victim.id)}`;
      await expect
        .poll(async () => (await storeState(b.admin, b.names)).consumers[victimKey]?.num_pending, { timeout: 10_000 })
        .toBe((settled.consumers[victimKey]?.num_pending ?? 0) + 1);
    }, 240_000);
  });
}
