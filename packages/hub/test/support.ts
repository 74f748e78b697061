/**
 * Test kit of the hub's integration tests. A `TestNet` is one hub on a fresh prefix of a real nats-server, driven by
 * a manual clock; agents register over RPC exactly as remote agents do, and each gets a `Mailbox` that drains its
 * durable inbox consumer, keeps every delivery, and answers channel invites by policy (ack, reject or ignore).
 */
import { HubRpc } from '@ag2net/client';
import { createManualClock, startHub, type Hub, type HubOptions, type ManualClock } from '@ag2net/hub';
import {
  EV_CHANNEL_INVITE,
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_INVITE_REJECT,
  EV_TEXT,
  EnvelopeSchema,
  NetworkError,
  OPERATOR_CALLER,
  RpcReplySchema,
  hubNames,
  newId,
  visibleTo,
  type ChannelMetadata,
  type Envelope,
  type EnvelopeInput,
  type HubNames,
  type HubRequest,
  type HubResponse,
  type Passport,
  type PassportInput,
  type ResumeInput,
  type RuleInput,
} from '@ag2net/protocol';
import { uniqueName, waitFor } from '@ag2net/test-support';
import { jetstream, jetstreamManager, type ConsumerMessages, type JetStreamClient } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';

/** Call options of the operator, who reads every channel, every task and the audit trail. */
export const asOperator = { caller: OPERATOR_CALLER } as const;

/** The manual clock starts here. */
export const T0 = '2026-01-01T00:00:00.000Z';
/** The hubs under test give invitees this long to answer, in clock ms. */
export const INVITE_ACK_TIMEOUT_MS = 30_000;
/** A ULID: 26 characters of Crockford base32. */
export const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** How an agent's mailbox answers a channel invite. */
export type InvitePolicy = 'ack' | 'reject' | 'ignore';

/** A registered agent as the tests see it. */
export interface TestAgent {
  readonly id: string;
  readonly name: string;
  readonly passport: Passport;
  readonly mailbox: Mailbox;
}

/** One hub on its own prefix, with the connection, RPC client and clock the tests drive it with. */
export interface TestNet extends AsyncDisposable {
  readonly url: string;
  readonly prefix: string;
  readonly names: HubNames;
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly rpc: HubRpc;
  readonly clock: ManualClock;
  /** The hub now serving the prefix (replaced by `startColdHub`). */
  hub: Hub;
  /** Every agent registered through `register`, by id. */
  readonly agents: Map<string, TestAgent>;
  /** The options every hub of this net starts with, beyond the kit's own. */
  readonly extra: HubOptions;
}

/**
 * Starts a hub on a fresh prefix of the server at `url`, with a manual clock at `T0`. `extra` adds or overrides hub
 * options (adapters, arbiter, evaluators, …); hubs started later by `startColdHub` get them too.
 */
export async function openNet(url: string, options: HubOptions = {}): Promise<TestNet> {
  // `AG2NET_TEST_PARTITIONS` runs a suite against hubs whose channels are spread over that many partitions.
  const partitions = options.partitions ?? Number(process.env['AG2NET_TEST_PARTITIONS'] ?? 1);
  const extra: HubOptions = { ...options, partitions };
  const prefix = uniqueName('hub');
  const clock = createManualClock(Date.parse(T0));
  const hub = await startHub({ ...hubOptions(url, prefix, clock), ...extra });
  const nc = await connect({ servers: url });
  const agents = new Map<string, TestAgent>();
  const net: TestNet = {
    url,
    prefix,
    names: hubNames(prefix, partitions),
    nc,
    js: jetstream(nc),
    // Fail fast when no hub answers instead of retrying past the test timeout.
    rpc: new HubRpc(nc, { prefix, retryForMs: 5_000 }),
    clock,
    hub,
    agents,
    extra,
    async [Symbol.asyncDispose]() {
      await Promise.all([...agents.values()].map((a) => a.mailbox.close()));
      await net.hub.close();
      await nc.close();
    },
  };
  return net;
}

/** Starts a second hub, cold, on the same NATS and prefix (the current one must be closed first). */
export async function startColdHub(net: TestNet): Promise<Hub> {
  net.hub = await startHub({ ...hubOptions(net.url, net.prefix, net.clock), ...net.extra });
  return net.hub;
}

/** No sweeper timer: sweeps run only when a test calls `hub.tick()`, at the manual clock's time. */
/**
 * Starts another hub of the net's prefix with the options its hubs start with (the kit's and `extra`: partitions, lease
 * time, …, but not the first hub's `connection`), beside the one serving, without waiting until it is active;
 * `connection` gives it a connection of the caller's. The caller closes it.
 */
export function startPeerHub(net: TestNet, connection?: NatsConnection): Promise<Hub> {
  // The first hub's own connection, if the net was opened with one, is not this one's.
  const { connection: _first, ...extra } = net.extra;
  return startHub({
    ...hubOptions(net.url, net.prefix, net.clock),
    ...extra,
    awaitActive: false,
    ...(connection === undefined ? {} : { connection }),
  });
}

function hubOptions(servers: string, prefix: string, clock: ManualClock): HubOptions {
  return { servers, prefix, clock, inviteAckTimeoutMs: INVITE_ACK_TIMEOUT_MS, sweepIntervalMs: 0 };
}

/** The manual clock's time as the hub stamps it. */
export function nowIso(net: TestNet): string {
  return new Date(net.clock.now()).toISOString();
}

/** The ISO timestamp `ms` after `T0`. */
export function at(ms: number): string {
  return new Date(Date.parse(T0) + ms).toISOString();
}

/** Options of `register`. */
export interface RegisterOptions {
  readonly passport?: Omit<PassportInput, 'name'>;
  readonly resume?: ResumeInput;
  readonly skillMd?: string;
  /** The agent's rule; default the default rule. */
  readonly rule?: RuleInput;
  /** How the agent's mailbox answers invites; default `ack`. */
  readonly invites?: InvitePolicy;
}

/** Registers `name` over RPC and starts draining its inbox. */
export async function register(net: TestNet, name: string, options: RegisterOptions = {}): Promise<TestAgent> {
  const { passport } = await net.rpc.call('register', {
    passport: { ...options.passport, name },
    resume: options.resume ?? {},
    skill_md: options.skillMd ?? null,
    rule: options.rule ?? null,
  });
  const id = passport.agent_id;
  if (id === null) throw new Error(`register returned no agent_id for ${name}`);
  const mailbox = await Mailbox.open(net, id, options.invites ?? 'ack');
  const agent: TestAgent = { id, name, passport, mailbox };
  net.agents.set(id, agent);
  return agent;
}

/**
 * Every delivery of one agent's durable inbox consumer, in arrival order, each acked as it arrives. Invites are
 * answered once each by `invitePolicy`. Deliveries that are not envelopes and answers the hub refused are kept in
 * `problems`, which fail every `waitFor` so that a broken contract shows up as itself, not as a timeout.
 */
export class Mailbox {
  readonly envelopes: Envelope[] = [];
  readonly problems: string[] = [];
  invitePolicy: InvitePolicy;
  readonly #net: TestNet;
  readonly #agentId: string;
  readonly #messages: ConsumerMessages;
  readonly #answered = new Set<string>();
  #loop: Promise<void> = Promise.resolve();

  private constructor(net: TestNet, agentId: string, messages: ConsumerMessages, policy: InvitePolicy) {
    this.#net = net;
    this.#agentId = agentId;
    this.#messages = messages;
    this.invitePolicy = policy;
  }

  static async open(net: TestNet, agentId: string, policy: InvitePolicy): Promise<Mailbox> {
    const consumer = await net.js.consumers.get(net.names.inboxStream, net.names.inboxConsumer(agentId));
    const mailbox = new Mailbox(net, agentId, await consumer.consume({ max_messages: 64 }), policy);
    mailbox.#loop = mailbox.#drain();
    return mailbox;
  }

  async #drain(): Promise<void> {
    try {
      await this.#consume();
    } catch (err) {
      // Never an unhandled rejection: the consumer can go away (unregister); say so where tests look.
      this.problems.push(`inbox consumer of ${this.#agentId} failed: ${String(err)}`);
    }
  }

  async #consume(): Promise<void> {
    for await (const msg of this.#messages) {
      msg.ack();
      let json: unknown;
      try {
        json = JSON.parse(msg.string());
      } catch {
        this.problems.push(`delivery ${msg.seq} on ${msg.subject} is not JSON: ${msg.string().slice(0, 200)}`);
        continue;
      }
      const parsed = EnvelopeSchema.safeParse(json);
      if (!parsed.success) {
        this.problems.push(`delivery ${msg.seq} on ${msg.subject} is not an envelope: ${parsed.error.message}`);
        continue;
      }
      this.envelopes.push(parsed.data);
      if (parsed.data.event_type === EV_CHANNEL_INVITE) await this.#answer(parsed.data);
    }
  }

  async #answer(invite: Envelope): Promise<void> {
    if (this.invitePolicy === 'ignore' || this.#answered.has(invite.envelope_id)) return;
    this.#answered.add(invite.envelope_id);
    const reply = this.invitePolicy === 'ack' ? inviteAck(invite, this.#agentId) : inviteReject(invite, this.#agentId);
    try {
      await this.#net.rpc.call('post', reply, { caller: this.#agentId });
    } catch (err) {
      this.problems.push(`answering invite ${invite.envelope_id} failed: ${String(err)}`);
    }
  }

  /** Deliveries of one channel, in arrival order. */
  of(channelId: string, eventType?: string): Envelope[] {
    return this.envelopes.filter(
      (e) => e.channel_id === channelId && (eventType === undefined || e.event_type === eventType),
    );
  }

  /** True when the envelope with this id was delivered. */
  has(envelopeId: string): boolean {
    return this.envelopes.some((e) => e.envelope_id === envelopeId);
  }

  /** Waits for a delivery matching `predicate` and returns it. */
  async waitFor(predicate: (e: Envelope) => boolean, what: string): Promise<Envelope> {
    // A problem ends the wait at once (null), rather than being retried until the timeout.
    const found = await waitFor(() => (this.problems.length > 0 ? null : this.envelopes.find(predicate)), {
      what: `${what} in the inbox of ${this.#agentId}`,
      timeoutMs: 10_000,
    });
    if (found === null) throw new Error(this.problems.join('\n'));
    return found;
  }

  async close(): Promise<void> {
    await this.#messages.close();
    await this.#loop;
  }

  /**
   * Stops reading once everything the hub has admitted so far reached this inbox and was acked: closing while a
   * delivery is on its way (a channel's `opened` right after it was created) would leave it unacked, waiting out the
   * inbox's ack wait, so a test of a recipient that stops reading would start with one message it did not expect.
   */
  async closeWhenRead(): Promise<void> {
    await drained(this.#net);
    const jsm = await jetstreamManager(this.#net.nc);
    const names = this.#net.names;
    await waitFor(
      async () => {
        const info = await jsm.consumers.info(names.inboxStream, names.inboxConsumer(this.#agentId));
        return info.num_pending + info.num_ack_pending === 0;
      },
      { what: `the inbox of ${this.#agentId} to be read`, timeoutMs: 10_000 },
    );
    await this.close();
  }
}

/** The ack an invitee posts for `invite`. */
export function inviteAck(invite: Envelope, senderId: string): EnvelopeInput {
  return {
    channel_id: invite.channel_id,
    sender_id: senderId,
    event_type: EV_CHANNEL_INVITE_ACK,
    event_data: { channel_id: invite.channel_id },
    causation_id: invite.envelope_id,
  };
}

/** The reject an invitee posts for `invite`. */
export function inviteReject(invite: Envelope, senderId: string): EnvelopeInput {
  return {
    channel_id: invite.channel_id,
    sender_id: senderId,
    event_type: EV_CHANNEL_INVITE_REJECT,
    event_data: { reason: 'busy' },
    causation_id: invite.envelope_id,
  };
}

/** Creates a channel as `creator` with `invitees`; resolves once the handshake completed. */
export async function openChannel(
  net: TestNet,
  creator: TestAgent,
  type: string,
  invitees: readonly TestAgent[],
  extra: Omit<HubRequest<'createChannel'>, 'type' | 'participants'> = {},
): Promise<ChannelMetadata> {
  // A partitioned hub needs the id of the channel to create (the SDK always mints one).
  const minted = net.names.partitions > 1 && (extra.channel_id ?? null) === null ? { channel_id: newId() } : {};
  const { channel } = await net.rpc.call(
    'createChannel',
    { ...extra, ...minted, type, participants: invitees.map((a) => a.id) },
    { caller: creator.id },
  );
  return channel;
}

/** Posts an envelope as `sender` (sender_id filled in). */
export async function post(
  net: TestNet,
  sender: TestAgent,
  envelope: Omit<EnvelopeInput, 'sender_id'>,
): Promise<HubResponse<'post'>> {
  return net.rpc.call('post', { ...envelope, sender_id: sender.id }, { caller: sender.id });
}

/** Posts `text` as `sender`. */
export async function say(
  net: TestNet,
  sender: TestAgent,
  channelId: string,
  text: string,
  extra: Partial<EnvelopeInput> = {},
): Promise<HubResponse<'post'>> {
  return post(net, sender, { channel_id: channelId, event_type: EV_TEXT, event_data: { text }, ...extra });
}

/** The channel's log as `reader` may read it. */
export async function readWal(net: TestNet, reader: TestAgent, channelId: string): Promise<Envelope[]> {
  const { envelopes } = await net.rpc.call('readWal', { channel_id: channelId }, { caller: reader.id });
  return envelopes;
}

/** The channel's metadata, as the operator reads it. */
export async function getChannel(net: TestNet, channelId: string): Promise<ChannelMetadata> {
  return (await net.rpc.call('getChannel', { channel_id: channelId }, asOperator)).channel;
}

/** Waits until the channel is in `state` (the hub drains `closing` before `closed`) and returns it. */
export async function waitForState(net: TestNet, channelId: string, state: string): Promise<ChannelMetadata> {
  return waitFor(
    async () => {
      const channel = await getChannel(net, channelId);
      return channel.state === state ? channel : undefined;
    },
    { what: `channel ${channelId} to be ${state}`, timeoutMs: 10_000 },
  );
}

/** The wire error of a call that must fail, as `{ code, message }` for one exact `toEqual`. */
export async function failure(call: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await call;
  } catch (err) {
    if (err instanceof NetworkError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('expected the hub to refuse the call, but it succeeded');
}

/**
 * Sends `payload` as is to an RPC subject, bypassing the client's own validation, and returns the error the hub
 * answered with (throws if the hub accepted it).
 */
export async function rawFailure(
  net: TestNet,
  subject: string,
  payload: string,
): Promise<{ code: string; message: string }> {
  const msg = await net.nc.request(subject, payload, { timeout: 5_000 });
  const reply = RpcReplySchema.parse(JSON.parse(msg.string()));
  if (reply.ok) throw new Error(`expected the hub to refuse ${subject}, but it answered ${msg.string()}`);
  return { code: reply.error.code, message: reply.error.message };
}

/**
 * Waits until the last envelope of the channel's log reached every participant who should get it. The hub delivers
 * a channel's envelopes in log order, so everything before it has been delivered too.
 */
export async function settle(net: TestNet, channelId: string): Promise<void> {
  const channel = await getChannel(net, channelId);
  const creator = net.agents.get(channel.creator_id);
  if (creator === undefined) throw new Error(`creator ${channel.creator_id} was not registered by the test`);
  const last = (await readWal(net, creator, channelId)).at(-1);
  if (last === undefined) return;
  for (const { agent_id: id } of channel.participants) {
    if (id === last.sender_id || !visibleTo(last, id)) continue;
    const agent = net.agents.get(id);
    if (agent === undefined) throw new Error(`participant ${id} was not registered by the test`);
    await agent.mailbox.waitFor((e) => e.envelope_id === last.envelope_id, `${last.event_type} #${last.sequence}`);
  }
}

/** The event types of `envelopes`, in order. */
export function types(envelopes: readonly Envelope[]): string[] {
  return envelopes.map((e) => e.event_type);
}

/** The sequences of `envelopes`, in order. */
export function sequences(envelopes: readonly Envelope[]): (number | undefined)[] {
  return envelopes.map((e) => e.sequence);
}

/** `[1, 2, …, n]`. */
export function oneTo(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i + 1);
}

/** Moves the manual clock `ms` forward, then runs the hub's sweepers once. */
export async function tickAfter(net: TestNet, ms: number): Promise<void> {
  net.clock.advance(ms);
  await net.hub.tick();
}

/** The audit records matching `filter` (default all), oldest first, read as the operator. */
export async function audit(
  net: TestNet,
  filter: HubRequest<'readAudit'> = {},
): Promise<HubResponse<'readAudit'>['records']> {
  return (await net.rpc.call('readAudit', filter, asOperator)).records;
}

/** Waits until the audit trail holds `count` records matching `filter`, and returns them. */
export async function auditCount(
  net: TestNet,
  filter: HubRequest<'readAudit'>,
  count: number,
): Promise<HubResponse<'readAudit'>['records']> {
  let seen: HubResponse<'readAudit'>['records'] = [];
  await waitFor(
    async () => {
      seen = await audit(net, filter);
      return seen.length >= count ? seen : undefined;
    },
    { what: `${count} audit records matching ${JSON.stringify(filter)}`, timeoutMs: 10_000 },
  );
  return seen;
}

/**
 * Waits until the hub has fanned out everything admitted so far (its delivery consumer has nothing pending), and so
 * has written every audit record the WAL implies (channel created, closed, expired; expectation violated).
 */
export async function drained(net: TestNet): Promise<void> {
  const jsm = await jetstreamManager(net.nc);
  const consumers = Array.from({ length: net.names.partitions }, (_, k) => net.names.deliveryConsumerOf(k));
  await waitFor(
    async () => {
      const infos = await Promise.all(consumers.map((c) => jsm.consumers.info(net.names.walStream, c)));
      return infos.every((info) => info.num_pending === 0 && info.num_ack_pending === 0);
    },
    { what: 'the hub to fan out every admitted envelope', timeoutMs: 10_000 },
  );
}
