/**
 * What an attack must not change: the state of every stream of a hub (its WAL, its inboxes and the streams behind
 * its KV buckets) and of every consumer on them, read with the admin's credentials. A write anywhere moves a stream's
 * `last_seq` (a KV put is a message on the bucket's stream, so this covers every key's revision); a read or an ack
 * through someone else's consumer moves that consumer's delivered or ack floor.
 */
import type { HubNames } from '@ag2net/protocol';
import { waitFor } from '@ag2net/test-support';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';

/** A stream's content, by its sequence numbers. */
export interface StreamState {
  readonly messages: number;
  readonly first_seq: number;
  readonly last_seq: number;
}

/** A consumer's progress. */
export interface ConsumerState {
  readonly delivered: number;
  readonly ack_floor: number;
  readonly num_pending: number;
  readonly num_ack_pending: number;
}

/** Streams and consumers by name; consumers as `<stream>/<consumer>`. */
export interface StoreState {
  readonly streams: Readonly<Record<string, StreamState>>;
  readonly consumers: Readonly<Record<string, ConsumerState>>;
}

/**
 * The state of the hub's streams and their consumers. The audit stream is left out: a hub records refusals there,
 * which is what it is for.
 */
export async function storeState(admin: NatsConnection, names: HubNames): Promise<StoreState> {
  const jsm = await jetstreamManager(admin);
  const P = names.prefix.toUpperCase();
  const streams: Record<string, StreamState> = {};
  const consumers: Record<string, ConsumerState> = {};
  for await (const info of jsm.streams.list()) {
    const name = info.config.name;
    const ours = name.startsWith(`${P}_`) || name.startsWith(`KV_${P}_`);
    if (!ours || name === names.auditStream) continue;
    streams[name] = { messages: info.state.messages, first_seq: info.state.first_seq, last_seq: info.state.last_seq };
    for await (const c of jsm.consumers.list(name)) {
      // Ephemeral ordered consumers (KV watches, reads) come and go with the hub's own work; durable ones are state.
      if (c.config.durable_name === undefined) continue;
      consumers[`${name}/${c.name}`] = {
        delivered: c.delivered.stream_seq,
        ack_floor: c.ack_floor.stream_seq,
        num_pending: c.num_pending,
        num_ack_pending: c.num_ack_pending,
      };
    }
  }
  return { streams, consumers };
}

/** Options of `settledStore`. */
export interface SettleOptions {
  /** How many channels the hub holds: each gets a snapshot once it is idle (`SNAPSHOT_IDLE_MS`). */
  readonly channels: number;
  /** Wait until every inbox consumer has nothing pending or unacked (clients that consume); default false. */
  readonly inboxesDrained?: boolean;
  /** Give up after this many ms; default 15 000. */
  readonly timeoutMs?: number;
}

/**
 * The store once the hub's own work settled: every WAL entry delivered and acked by the delivery consumer, every
 * channel's idle snapshot written, and (when asked) every inbox drained. From then on nothing moves by itself (with
 * sweeps off and a lease longer than the test), so a changed state is someone else's write.
 */
export function settledStore(admin: NatsConnection, names: HubNames, options: SettleOptions): Promise<StoreState> {
  return waitFor(
    async () => {
      const state = await storeState(admin, names);
      const delivery = state.consumers[`${names.walStream}/${names.deliveryConsumer}`];
      const delivered =
        delivery?.ack_floor === state.streams[names.walStream]?.last_seq && delivery?.num_ack_pending === 0;
      const snapshots = state.streams[`KV_${names.snapshotsBucket}`]?.messages === options.channels;
      const drained =
        options.inboxesDrained !== true ||
        Object.entries(state.consumers).every(
          ([name, c]) => !name.startsWith(`${names.inboxStream}/`) || (c.num_pending === 0 && c.num_ack_pending === 0),
        );
      return delivered && snapshots && drained && state;
    },
    { what: 'the hub to settle (deliveries acked, snapshots written)', timeoutMs: options.timeoutMs ?? 15_000 },
  );
}
