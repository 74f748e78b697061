import type { HubRpc } from '@ag2net/client';
import { EV_CHANNEL_INVITE, EV_CHANNEL_INVITE_ACK, newId, type HubNames } from '@ag2net/protocol';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Mailbox } from './mailbox.js';

/** Creating a channel waits for the invitees' acks; under a 10,000-channel setup that can take a while. */
const CREATE_TIMEOUT_MS = 120_000;

/** Runs `fn` over `items` with at most `limit` calls at once; results in item order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  const jobs = items.map((item, index) => ({ item, index }));
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let job = jobs[next++]; job !== undefined; job = jobs[next++]) {
      results[job.index] = await fn(job.item, job.index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * The two ends of channel `i` among `agents` (at least two): creators rotate over every agent, and each creator's
 * successive channels go to successive other agents, so that pairs spread evenly and nobody invites itself.
 */
export function pairFor(agents: readonly string[], i: number): { creator: string; invitee: string } {
  const n = agents.length;
  if (n < 2) throw new Error('pairs need at least two agents');
  const offset = 1 + (Math.floor(i / n) % (n - 1));
  return { creator: agents[i % n] ?? '', invitee: agents[((i % n) + offset) % n] ?? '' };
}

/** Registers `count` agents named `<namePrefix>-<i>` through the RPC, `concurrency` at a time; returns their ids. */
/**
 * A rule that asks for no rate, channel or inbox cap of its own (0): the hub holds it under the operator's ceilings,
 * which the bench host lifts. Load generators never drain their inboxes, so AG2's default 1 000 would refuse them.
 */
const UNCAPPED_RULE = {
  limits: { max_concurrent_channels: 0, rate: { per_minute: 0, burst: 0 }, inbox: { max_pending: 0 } },
} as const;

export async function registerAgents(
  rpc: HubRpc,
  namePrefix: string,
  count: number,
  concurrency = 8,
): Promise<string[]> {
  const indexes = Array.from({ length: count }, (_, i) => i);
  return mapLimit(indexes, concurrency, async (i) => {
    const { passport } = await rpc.call('register', { passport: { name: `${namePrefix}-${i}` }, rule: UNCAPPED_RULE });
    if (passport.agent_id === null) throw new Error(`register gave ${passport.name} no id`);
    return passport.agent_id;
  });
}

/** Opens a channel through the handshake (the invitees' mailboxes must be acking); returns its id. */
export async function openChannel(
  rpc: HubRpc,
  spec: {
    readonly type: string;
    readonly creator: string;
    readonly invitees: readonly string[];
    /** The id to give the channel (e.g. one of a chosen partition); default a fresh one. */
    readonly channelId?: string;
  },
): Promise<string> {
  // A proposed id makes the RPC's own retry (on a timeout) find this channel instead of creating a second one.
  const { channel } = await rpc.call(
    'createChannel',
    { channel_id: spec.channelId ?? newId(), type: spec.type, participants: [...spec.invitees] },
    { caller: spec.creator, timeout: CREATE_TIMEOUT_MS },
  );
  return channel.channel_id;
}

/**
 * Opens the inbox of each agent and acks every invite it gets, as an auto-accepting agent does: the ack answers the
 * invite (`causation_id`) and goes through the RPC like any post.
 */
export async function openMailboxes(
  rpc: HubRpc,
  js: JetStreamClient,
  names: HubNames,
  agentIds: readonly string[],
  options: { readonly trackArrivals?: boolean } = {},
): Promise<Map<string, Mailbox>> {
  const entries = await Promise.all(
    agentIds.map(async (id) => {
      const mailbox = await Mailbox.open({
        js,
        stream: names.inboxStream,
        consumer: names.inboxConsumer(id),
        trackArrivals: options.trackArrivals ?? false,
        onDelivery: async (d) => {
          if (d.event_type !== EV_CHANNEL_INVITE) return;
          await rpc.call(
            'post',
            {
              channel_id: d.channel_id,
              sender_id: id,
              event_type: EV_CHANNEL_INVITE_ACK,
              event_data: { channel_id: d.channel_id },
              causation_id: d.envelope_id,
            },
            { caller: id },
          );
        },
      });
      return [id, mailbox] as const;
    }),
  );
  return new Map(entries);
}

/** Closes mailboxes and fails if any of them saw a problem (a bad delivery, a refused invite ack). */
export async function closeMailboxes(mailboxes: Iterable<Mailbox>): Promise<void> {
  const all = [...mailboxes];
  await Promise.all(all.map((m) => m.close()));
  const problems = all.flatMap((m) => m.problems);
  if (problems.length > 0) throw new Error(`mailbox problems:\n${problems.slice(0, 10).join('\n')}`);
}

/**
 * Waits until the hub's delivery consumers (one per partition) have fanned out everything in the WAL (nothing
 * pending, nothing unacked); returns the `performance.now()` at which the last of them was first seen so.
 */
export async function waitForDelivery(jsm: JetStreamManager, names: HubNames, timeoutMs = 300_000): Promise<number> {
  let last = 0;
  for (let k = 0; k < names.partitions; k += 1) {
    last = await waitForConsumer(jsm, names.walStream, names.deliveryConsumerOf(k), timeoutMs);
  }
  return last;
}

/** Waits until a durable consumer has nothing pending and nothing unacked; returns when that was first seen. */
export async function waitForConsumer(
  jsm: JetStreamManager,
  stream: string,
  consumer: string,
  timeoutMs = 300_000,
): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const info = await jsm.consumers.info(stream, consumer);
    if (info.num_pending === 0 && info.num_ack_pending === 0) return performance.now();
    if (performance.now() > deadline) {
      throw new Error(
        `delivery still ${info.num_pending} pending / ${info.num_ack_pending} unacked after ${timeoutMs} ms`,
      );
    }
    await sleep(25);
  }
}
