import { DEFAULT_OPERATOR_LIMITS } from '@ag2net/hub';
import { inboxStreamConfig, walStreamConfig } from '@ag2net/hub/internal';
import { BENCH_LIMITS } from '../limits.js';
import { AckPolicy, DeliverPolicy, JetStreamApiError, type JetStreamManager } from '@nats-io/jetstream';

const NS_PER_MS = 1_000_000;

/** Names of the raw baseline's resources under one prefix; nothing the hub uses. */
export interface RawNames {
  readonly walStream: string;
  wal(channel: string): string;
  readonly walAll: string;
  readonly inboxStream: string;
  inbox(agent: string): string;
  readonly inboxAll: string;
  /** The relay's request subject for a channel. */
  request(channel: string): string;
  readonly requestAll: string;
  readonly relayConsumer: string;
}

export function rawNames(prefix: string): RawNames {
  const P = prefix.toUpperCase();
  return {
    walStream: `${P}_RAWWAL`,
    wal: (channel) => `${prefix}.rawwal.${channel}`,
    walAll: `${prefix}.rawwal.>`,
    inboxStream: `${P}_RAWINBOX`,
    inbox: (agent) => `${prefix}.rawinbox.${agent}`,
    inboxAll: `${prefix}.rawinbox.>`,
    request: (channel) => `${prefix}.rawreq.${channel}`,
    requestAll: `${prefix}.rawreq.*`,
    relayConsumer: 'relay',
  };
}

/** The raw WAL: the hub's own WAL stream config (`walStreamConfig`), so the baseline pays the same storage work. */
export async function createRawWal(jsm: JetStreamManager, names: RawNames): Promise<void> {
  await jsm.streams.add(walStreamConfig(names, 1));
}

/** The raw inboxes: the hub's inbox stream config, with one durable consumer per recipient. */
export async function createRawInboxes(jsm: JetStreamManager, names: RawNames): Promise<void> {
  await jsm.streams.add(inboxStreamConfig(names, 1, { ...DEFAULT_OPERATOR_LIMITS, ...BENCH_LIMITS }));
}

/** A durable consumer like an agent's inbox consumer in the hub. */
export async function createRawInboxConsumer(jsm: JetStreamManager, names: RawNames, agent: string): Promise<void> {
  await jsm.consumers.add(names.inboxStream, {
    durable_name: agent,
    filter_subject: names.inbox(agent),
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: 60_000 * NS_PER_MS,
    max_ack_pending: 1000,
    max_deliver: -1,
  });
}

/** The relay's consumer over the raw WAL, like the hub's delivery consumer. */
export async function createRelayConsumer(jsm: JetStreamManager, names: RawNames): Promise<void> {
  await jsm.consumers.add(names.walStream, {
    durable_name: names.relayConsumer,
    filter_subject: names.walAll,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: 3_000 * NS_PER_MS,
    max_ack_pending: 2_000,
    max_deliver: -1,
  });
}

/** Deletes every stream whose name starts with `<PREFIX>_` (the hub's and the baseline's), ignoring absent ones. */
export async function deleteStreamsOf(jsm: JetStreamManager, prefix: string): Promise<void> {
  const head = `${prefix.toUpperCase()}_`;
  const kvHead = `KV_${head}`;
  const names: string[] = [];
  for await (const name of jsm.streams.names()) {
    if (name.startsWith(head) || name.startsWith(kvHead)) names.push(name);
  }
  for (const name of names) {
    try {
      await jsm.streams.delete(name);
    } catch (err) {
      if (!(err instanceof JetStreamApiError)) throw err;
    }
  }
}
