import { HubClient } from '@ag2net/client';
import { MAX_PARTITIONS, hubNames, type Health } from '@ag2net/protocol';
import { JetStreamApiError, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { setTimeout as sleep } from 'node:timers/promises';

/** How many partitions `npm start` spreads a new prefix's channels over: two hubs, each serving a share. */
export const STACK_PARTITIONS = 8;

/** The ids of the stack's two hubs. */
export const STACK_HUB_IDS = ['hub-1', 'hub-2'] as const;

/** JetStream's error codes for a consumer and a stream that do not exist. */
const CONSUMER_NOT_FOUND = 10014;
const STREAM_NOT_FOUND = 10059;

/** How the stack reaches its NATS as the operator: its URL and prefix, and `admin.creds` on a secured stack. */
export interface StackOperator {
  readonly natsUrl: string;
  readonly prefix: string;
  /** The operator's `.creds` file; `null` on an insecure stack. */
  readonly creds: string | null;
}

/** Connects as the operator: reads JetStream and the hubs' roster. */
async function operatorClient(options: StackOperator): Promise<HubClient> {
  return HubClient.connect({
    servers: options.natsUrl,
    prefix: options.prefix,
    operator: true,
    ...(options.creds === null ? {} : { creds: options.creds }),
  });
}

/**
 * The partition count `prefix` was provisioned with, read from its delivery consumers as a hub checks it (one
 * partition has `hub_delivery`, `P` partitions have `hub_delivery_0` … `hub_delivery_<P-1>`); `null` for a prefix no
 * hub has started on.
 */
export async function provisionedPartitions(options: StackOperator): Promise<number | null> {
  const client = await operatorClient(options);
  try {
    const jsm = await jetstreamManager(client.nc);
    const names = hubNames(options.prefix);
    const has = (durable: string): Promise<boolean> => consumerExists(jsm, names.walStream, durable);
    if (await has(names.deliveryConsumerOf(0))) return 1;
    const many = hubNames(options.prefix, MAX_PARTITIONS);
    if (!(await has(many.deliveryConsumerOf(0)))) return null;
    // Consumers 0 … P-1 exist: the largest that does, by bisection.
    let [present, absent] = [0, MAX_PARTITIONS];
    while (absent - present > 1) {
      const mid = Math.floor((present + absent) / 2);
      if (await has(many.deliveryConsumerOf(mid))) present = mid;
      else absent = mid;
    }
    return present + 1;
  } finally {
    await client.close();
  }
}

async function consumerExists(jsm: JetStreamManager, stream: string, durable: string): Promise<boolean> {
  try {
    await jsm.consumers.info(stream, durable);
    return true;
  } catch (err) {
    if (err instanceof JetStreamApiError && (err.code === CONSUMER_NOT_FOUND || err.code === STREAM_NOT_FOUND)) {
      return false;
    }
    throw err;
  }
}

/**
 * Waits until `prefix` is provisioned with `partitions` (its first hub created the streams and consumers), so that the
 * next hub finds them made; throws when `failed()` says the first hub gave up, or after `timeoutMs`.
 */
export async function untilProvisioned(
  options: StackOperator & {
    readonly partitions: number;
    readonly failed: () => string | null;
    readonly timeoutMs: number;
  },
): Promise<void> {
  const until = Date.now() + options.timeoutMs;
  for (;;) {
    const failure = options.failed();
    if (failure !== null) throw new Error(failure);
    if ((await provisionedPartitions(options)) === options.partitions) return;
    if (Date.now() > until)
      throw new Error(`prefix ${options.prefix} was not provisioned within ${options.timeoutMs} ms`);
    await sleep(200);
  }
}

/**
 * The hubs of the prefix and what each holds, once every partition is held by exactly one hub and, with several
 * partitions, every hub holds its share (a hub that joined is handed its share after two lease times), or what they
 * hold after `waitMs`. Sorted by hub id.
 */
export async function settledHubs(
  options: StackOperator & {
    readonly waitMs: number;
    /** Told once, when the hubs have not settled at the first look. */
    readonly waiting: () => void;
  },
): Promise<Health[]> {
  const client = await operatorClient(options);
  try {
    const until = Date.now() + options.waitMs;
    for (let look = 0; ; look++) {
      const hubs = (await client.hubs({ timeout: 500 })).sort((a, b) => a.hub_id.localeCompare(b.hub_id));
      if (settled(hubs) || Date.now() > until) return hubs;
      if (look === 0) options.waiting();
      await sleep(500);
    }
  } finally {
    await client.close();
  }
}

/** Every partition held by one hub, and every hub holding its fair share, as the hubs balance them. */
function settled(hubs: readonly Health[]): boolean {
  const partitions = hubs[0]?.partitions ?? 0;
  if (partitions === 0) return false;
  if (partitions === 1) return hubs.filter((h) => h.role === 'active').length === 1;
  const held = hubs.flatMap((h) => h.held.map((p) => p.partition)).sort((a, b) => a - b);
  if (held.length !== partitions || held.some((k, i) => k !== i)) return false;
  const share = Math.floor(partitions / hubs.length);
  return hubs.every((h) => h.held.length === share || h.held.length === share + 1);
}
