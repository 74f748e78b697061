import { HubUnavailableError, type HubRpc } from '@ag2net/client';
import {
  EV_CHANNEL_INVITE,
  EV_TEXT,
  EnvelopeSchema,
  hubNames,
  newId,
  type Envelope,
  type HubNames,
  type PostAck,
} from '@ag2net/protocol';
import { waitFor, within } from '@ag2net/test-support';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { ackInviteAs } from './invites.js';

/** A conversation channel between two registered agents that both accepted it. */
export interface ChaosChannel {
  readonly channel: string;
  readonly a: string;
  readonly b: string;
}

/** An acknowledged post: the hub said it admitted `text` as `envelope_id` at `sequence` of `channel`. */
export interface AckedPost {
  readonly channel: string;
  readonly sequence: number;
  readonly text: string;
}

/** What a load run saw from the clients' side. */
export interface LoadRun {
  /** Acked posts by envelope id. */
  readonly acked: Map<string, AckedPost>;
  /** Every error a client call surfaced (after the client's own retries), as `<channel>: <Name>: <message>`. */
  readonly errors: string[];
  /** Resolves once every channel's loop has sent all its posts. */
  readonly done: Promise<void>;
  /** Resolves once at least `n` posts were acked (or the run ended first). */
  ackedAtLeast(n: number): Promise<void>;
}

/** A post of the load: text `<channel>#<n>`, with its envelope id when the load resends it itself. */
interface PostBody {
  readonly channel_id: string;
  readonly sender_id: string;
  readonly event_type: typeof EV_TEXT;
  readonly event_data: { readonly text: string };
  readonly envelope_id?: string;
}

/** One attempt of a post, as a load that resends posts itself (`resendForMs`) saw it. */
export interface PostAttempt {
  readonly channel: string;
  /** `Date.now()` when the attempt was sent and when it ended. */
  readonly startedAt: number;
  readonly endedAt: number;
  /** `null` for an acked attempt; else the failure as `<Name>: <message>` (with its cause's, for a resend). */
  readonly error: string | null;
}

/**
 * Registers `count` pairs of agents and opens one accepted conversation channel per pair, all pairs at once. Given
 * channel ids instead of a count, opens one channel per id, with that id (to place channels on chosen partitions).
 */
export async function openChannels(
  nc: NatsConnection,
  rpc: HubRpc,
  countOrIds: number | readonly string[],
): Promise<ChaosChannel[]> {
  const names = rpc.names;
  const js = jetstream(nc);
  const ids = typeof countOrIds === 'number' ? Array.from({ length: countOrIds }, () => undefined) : countOrIds;
  const open = async (i: number): Promise<ChaosChannel> => {
    const a = (await rpc.call('register', { passport: { name: `a${i}` } })).passport.agent_id ?? '';
    const b = (await rpc.call('register', { passport: { name: `b${i}` } })).passport.agent_id ?? '';
    const id = ids[i];
    const request = {
      type: 'conversation' as const,
      participants: [b],
      ...(id === undefined ? {} : { channel_id: id }),
    };
    const creating = rpc.call('createChannel', request, { caller: a });
    const accepting = (async () => {
      const consumer = await js.consumers.get(names.inboxStream, names.inboxConsumer(b));
      const msg = await consumer.next({ expires: 10_000 });
      if (msg === null) throw new Error(`no invite reached ${b}`);
      msg.ack();
      const invite = EnvelopeSchema.parse(msg.json());
      if (invite.event_type !== EV_CHANNEL_INVITE) throw new Error(`expected an invite, got ${invite.event_type}`);
      await ackInviteAs(rpc, invite, b);
    })();
    const [created] = await Promise.all([creating, accepting]);
    return { channel: created.channel.channel_id, a, b };
  };
  return Promise.all(ids.map((_, i) => open(i)));
}

/**
 * Posts `postsPerChannel` texts to every channel, one at a time per channel and all channels at once, spreading the
 * channels over `clients` (each its own NATS connection). Text `<channel>#<n>` is unique in the whole run.
 */
export function runLoad(options: {
  readonly clients: readonly HubRpc[];
  readonly channels: readonly ChaosChannel[];
  readonly postsPerChannel: number;
  /** Per-attempt request timeout; the client resends a timed-out post with the same envelope id. */
  readonly attemptTimeoutMs: number;
  /** Ends the run early: each channel sends no further post once it aborts. Default: the run sends every post. */
  readonly signal?: AbortSignal;
  /** How long each channel waits between two of its posts, ms; default 0 (a steady load rather than a flood). */
  readonly gapMs?: number;
  /**
   * Resend a post here rather than in the client: each post carries its own envelope id and is sent with the
   * client's `retryForMs` 0, and an attempt the client gives up (`HubUnavailableError`: no responder, a timeout, an
   * `unavailable` answer) is sent again after 50 ms, for up to this many ms. Default: the client resends.
   */
  readonly resendForMs?: number;
  /** Told every attempt of a post when the load resends itself (`resendForMs`). */
  readonly onAttempt?: (attempt: PostAttempt) => void;
}): LoadRun {
  const acked = new Map<string, AckedPost>();
  const errors: string[] = [];
  const watchers: { n: number; resolve: () => void }[] = [];
  const notify = (): void => {
    for (const w of watchers.splice(0)) {
      if (acked.size >= w.n) w.resolve();
      else watchers.push(w);
    }
  };
  const describe = (err: unknown): string => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));
  /** One post, resent here (each attempt told to `onAttempt`) when `resendForMs` is set, else by the client. */
  const post = async (rpc: HubRpc, channel: string, body: PostBody): Promise<PostAck> => {
    const resendForMs = options.resendForMs;
    if (resendForMs === undefined)
      return rpc.call('post', body, { caller: body.sender_id, timeout: options.attemptTimeoutMs });
    const deadline = Date.now() + resendForMs;
    const once = { caller: body.sender_id, timeout: options.attemptTimeoutMs, retryForMs: 0 };
    for (;;) {
      const startedAt = Date.now();
      try {
        const ack = await rpc.call('post', body, once);
        options.onAttempt?.({ channel, startedAt, endedAt: Date.now(), error: null });
        return ack;
      } catch (err) {
        const cause = err instanceof Error && err.cause !== undefined ? ` (${describe(err.cause)})` : '';
        options.onAttempt?.({ channel, startedAt, endedAt: Date.now(), error: `${describe(err)}${cause}` });
        if (!(err instanceof HubUnavailableError) || Date.now() >= deadline) throw err;
        await sleep(50);
      }
    }
  };
  const done = Promise.all(
    options.channels.map(async ({ channel, a, b }, i) => {
      const rpc = options.clients[i % options.clients.length];
      if (rpc === undefined) throw new Error('runLoad needs at least one client');
      for (let n = 0; n < options.postsPerChannel && options.signal?.aborted !== true; n += 1) {
        if (n > 0 && (options.gapMs ?? 0) > 0) await sleep(options.gapMs);
        const sender = n % 2 === 0 ? a : b;
        const text = `${channel}#${n}`;
        const body: PostBody = {
          channel_id: channel,
          sender_id: sender,
          event_type: EV_TEXT,
          event_data: { text },
          ...(options.resendForMs === undefined ? {} : { envelope_id: newId() }),
        };
        try {
          const ack = await post(rpc, channel, body);
          if (acked.has(ack.envelope_id)) errors.push(`${channel}: envelope ${ack.envelope_id} acked twice`);
          acked.set(ack.envelope_id, { channel, sequence: ack.sequence, text });
          notify();
        } catch (err) {
          errors.push(`${channel}: ${describe(err)}`);
        }
      }
    }),
  ).then(() => {
    for (const w of watchers.splice(0)) w.resolve();
  });
  return {
    acked,
    errors,
    done,
    ackedAtLeast: (n) =>
      new Promise<void>((resolve) => {
        if (acked.size >= n) resolve();
        else watchers.push({ n, resolve });
        void done.then(resolve);
      }),
  };
}

/**
 * Every message of the hub's WAL stream, in stream order, read straight from JetStream. A read that fails (a cluster
 * still settling after a node loss) is started over, for up to 20 s.
 */
export async function readWholeWal(nc: NatsConnection, prefix: string): Promise<Envelope[]> {
  return waitFor(() => within(readWalOnce(nc, prefix), 15_000, 'one read of the WAL'), {
    timeoutMs: 20_000,
    intervalMs: 250,
    what: 'a full read of the WAL',
  });
}

async function readWalOnce(nc: NatsConnection, prefix: string): Promise<Envelope[]> {
  const names = hubNames(prefix);
  const jsm = await jetstreamManager(nc);
  const { first_seq: first, last_seq: last } = (await jsm.streams.info(names.walStream)).state;
  // Message gets by sequence, a few at a time: no consumer to place, which a cluster short of a node may refuse.
  const seqs = last === 0 ? [] : Array.from({ length: last - first + 1 }, (_, i) => first + i);
  const out: Envelope[] = [];
  for (let i = 0; i < seqs.length; i += 32) {
    const batch = await Promise.all(
      seqs.slice(i, i + 32).map((seq) => jsm.streams.getMessage(names.walStream, { seq })),
    );
    for (const m of batch) if (m !== null) out.push(EnvelopeSchema.parse(m.json()));
  }
  return out;
}

/** A channel's envelopes grouped from the whole WAL, in stream order. */
export function byChannel(wal: readonly Envelope[]): Map<string, Envelope[]> {
  const out = new Map<string, Envelope[]>();
  for (const e of wal) {
    const list = out.get(e.channel_id) ?? [];
    list.push(e);
    out.set(e.channel_id, list);
  }
  return out;
}

/**
 * The log's defects as readable lines (none when the log is sound): per channel, sequences that are not exactly
 * 1, 2, 3, … in stream order (duplicates, gaps, reordering); an envelope id written twice; a text of the load
 * written twice; an acked post missing, written twice, or at another channel or sequence than acked.
 */
export function walDefects(wal: readonly Envelope[], acked: ReadonlyMap<string, AckedPost>): string[] {
  const defects: string[] = [];
  for (const [channel, list] of byChannel(wal)) {
    const seqs = list.map((e) => e.sequence);
    const bad = seqs.findIndex((s, i) => s !== i + 1);
    if (bad >= 0) defects.push(`${channel}: sequence ${String(seqs[bad])} at position ${bad + 1} of ${seqs.join(',')}`);
  }
  const ids = new Map<string, Envelope[]>();
  const texts = new Map<string, number>();
  for (const e of wal) {
    ids.set(e.envelope_id, [...(ids.get(e.envelope_id) ?? []), e]);
    const text = e.event_type === EV_TEXT ? e.event_data['text'] : undefined;
    if (typeof text === 'string') texts.set(text, (texts.get(text) ?? 0) + 1);
  }
  for (const [id, list] of ids) if (list.length > 1) defects.push(`envelope ${id} written ${list.length} times`);
  for (const [text, n] of texts) if (n > 1) defects.push(`text ${text} written ${n} times`);
  for (const [id, post] of acked) {
    const found = ids.get(id) ?? [];
    const where = found.map((e) => `${e.channel_id}@${e.sequence}`).join(',');
    if (found.length !== 1 || found[0]?.channel_id !== post.channel || found[0]?.sequence !== post.sequence) {
      defects.push(`acked ${post.text} as ${id} at ${post.sequence}, in the WAL: [${where}]`);
    }
  }
  return defects;
}

/**
 * Waits until the hub's delivery consumer has fanned out and acked everything in the WAL: every partition's, given
 * the names of a partitioned deployment (`hubNames(prefix, P)`) rather than its prefix.
 */
export async function deliveryCaughtUp(
  nc: NatsConnection,
  prefixOrNames: string | HubNames,
  timeoutMs: number,
): Promise<void> {
  const names = typeof prefixOrNames === 'string' ? hubNames(prefixOrNames) : prefixOrNames;
  const consumers = Array.from({ length: names.partitions }, (_, k) => names.deliveryConsumerOf(k));
  const jsm = await jetstreamManager(nc);
  let seen = 'nothing';
  try {
    await waitFor(
      async () => {
        const lagging: string[] = [];
        for (const consumer of consumers) {
          const info = await jsm.consumers.info(names.walStream, consumer);
          if (info.num_pending === 0 && info.num_ack_pending === 0) continue;
          lagging.push(
            `${consumer}: pending ${info.num_pending}, ack pending ${info.num_ack_pending}, ack floor ${info.ack_floor.stream_seq}`,
          );
        }
        seen = lagging.length === 0 ? 'caught up' : lagging.join('; ');
        return lagging.length === 0;
      },
      { timeoutMs, intervalMs: 100, what: 'the hub to fan every admitted envelope out' },
    );
  } catch (err) {
    throw new Error(`the hub did not fan every admitted envelope out (last seen: ${seen})`, { cause: err });
  }
}

/**
 * Posts one more text to every channel and returns, per channel, `[sequence acked, WAL's last sequence + 1]` read
 * before the post: equal pairs mean the channel is not stuck and the hub's live sequence equals the log's.
 */
export async function probeEveryChannel(
  nc: NatsConnection,
  rpc: HubRpc,
  channels: readonly ChaosChannel[],
): Promise<{ channel: string; acked: number | string; expected: number }[]> {
  const before = byChannel(await readWholeWal(nc, rpc.names.prefix));
  return Promise.all(
    channels.map(async ({ channel, a }) => {
      const expected = (before.get(channel)?.at(-1)?.sequence ?? 0) + 1;
      const body = { channel_id: channel, sender_id: a, event_type: EV_TEXT, event_data: { text: `${channel}#probe` } };
      try {
        return { channel, acked: (await rpc.call('post', body, { caller: a, timeout: 2000 })).sequence, expected };
      } catch (err) {
        return { channel, acked: err instanceof Error ? `${err.name}: ${err.message}` : String(err), expected };
      }
    }),
  );
}

/**
 * Every delivery waiting in an agent's inbox, read and acked through its durable consumer until none is pending (so
 * after the hub caught up, every delivery the agent ever got that it did not ack before).
 */
export async function drainInbox(nc: NatsConnection, prefix: string, agentId: string): Promise<Envelope[]> {
  const names = hubNames(prefix);
  const consumer = await jetstream(nc).consumers.get(names.inboxStream, names.inboxConsumer(agentId));
  const pending = (await consumer.info()).num_pending;
  const out: Envelope[] = [];
  while (out.length < pending) {
    const batch = await consumer.fetch({ max_messages: pending - out.length, expires: 2000 });
    for await (const m of batch) {
      out.push(EnvelopeSchema.parse(m.json()));
      m.ack();
    }
  }
  return out;
}

/** How an invitee's acceptance went: when it read its invite and when its ack was acked (`Date.now()`), or why not. */
export interface Acceptance {
  readonly readAt: number;
  readonly ackedAt: number;
  readonly error: string | null;
}

/**
 * Reads the invitee's first inbox message, which must be its invite, and acks the invite as the invitee. Reads are
 * tried again through outages of the server until `deadline` (`Date.now()`); the ack is resent by the client.
 */
export async function acceptInvite(
  nc: NatsConnection,
  rpc: HubRpc,
  invitee: string,
  deadline: number,
): Promise<Acceptance> {
  const names = rpc.names;
  const describe = (err: unknown): string => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));
  let error = 'nothing in the inbox';
  while (Date.now() < deadline) {
    try {
      const consumer = await jetstream(nc).consumers.get(names.inboxStream, names.inboxConsumer(invitee));
      const msg = await within(consumer.next({ expires: 2000 }), 15_000, 'a pull of the invite');
      if (msg === null) continue;
      const invite = EnvelopeSchema.parse(msg.json());
      msg.ack();
      const readAt = Date.now();
      if (invite.event_type !== EV_CHANNEL_INVITE) {
        return { readAt, ackedAt: 0, error: `expected an invite, got ${invite.event_type}` };
      }
      try {
        await ackInviteAs(rpc, invite, invitee);
        return { readAt, ackedAt: Date.now(), error: null };
      } catch (err) {
        return { readAt, ackedAt: 0, error: `acking the invite: ${describe(err)}` };
      }
    } catch (err) {
      error = describe(err);
      await sleep(200);
    }
  }
  return { readAt: 0, ackedAt: 0, error };
}
