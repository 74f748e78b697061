import { HUB_OPS, MAX_PARTITIONS, hubNames, routeOf, type HubNames, type HubOp } from '@ag2net/protocol';

/** What a call allows the discovery of the partition count that it waits for. */
export interface DiscoveryBudget {
  readonly signal?: AbortSignal | undefined;
  /** The call's time for one attempt, in ms, if it gave one. */
  readonly timeout?: number | undefined;
  /** When the call stops retrying (`Date.now()` ms). */
  readonly deadline: number;
}

/** Throws `RangeError` unless `partitions` is a deployment's partition count: an integer from 1 to `MAX_PARTITIONS`. */
export function checkPartitionCount(partitions: number): void {
  if (!Number.isInteger(partitions) || partitions < 1 || partitions > MAX_PARTITIONS) {
    throw new RangeError(`partitions must be an integer from 1 to ${MAX_PARTITIONS}, not ${partitions}`);
  }
}

/**
 * A deployment's partition count, as the names of its subjects (`hubNames(prefix, partitions)`): given up front, or
 * asked of the hub once by the first call that needs it, and shared by every call after. An ask that failed is
 * forgotten, so the next call asks again.
 */
export class PartitionCount {
  readonly #prefix: string;
  readonly #ask: (budget: DiscoveryBudget) => Promise<number>;
  #names: Promise<HubNames> | null = null;

  /** `known`: the count given up front (checked here: an integer from 1 to `MAX_PARTITIONS`, else `RangeError`). */
  constructor(prefix: string, known: number | undefined, ask: (budget: DiscoveryBudget) => Promise<number>) {
    this.#prefix = prefix;
    this.#ask = ask;
    if (known !== undefined) checkPartitionCount(known);
    if (known !== undefined) this.#names = Promise.resolve(hubNames(prefix, known));
  }

  /** The deployment's names, asking the hub under `budget` when no call asked yet or the last ask failed. */
  async names(budget: DiscoveryBudget): Promise<HubNames> {
    let failed: Promise<HubNames> | null = null;
    for (;;) {
      budget.signal?.throwIfAborted();
      const shared = this.#names;
      if (shared !== null && shared !== failed) {
        try {
          return await shared;
        } catch {
          // Another call's ask failed, maybe for that call's own reasons (its signal, its budget): this call asks
          // again under its own.
          failed = shared;
          continue;
        }
      }
      const own = this.#ask(budget).then((partitions) => hubNames(this.#prefix, partitions));
      this.#names = own;
      try {
        return await own;
      } catch (err) {
        if (this.#names === own) this.#names = null;
        throw err;
      }
    }
  }
}

/**
 * The subject of one request of `op` (`body` its validated request) in a deployment named `names`: an operation about
 * one channel goes to that channel's partition, an operation each partition answers to `partition` (default 0 with
 * one partition), any other to the home partition's subject. With one partition every subject is `names.rpc(op,
 * caller)`. Throws `TypeError` for a caller missing where the subject needs one, a scattered op without a partition
 * in a partitioned deployment, and a `createChannel` without a `channel_id` there; `RangeError` for a partition out
 * of range.
 */
export function routedSubject(
  op: HubOp,
  body: unknown,
  to: { readonly names: HubNames; readonly caller?: string | undefined; readonly partition?: number | undefined },
): string {
  const { names, caller } = to;
  const route = routeOf(op);
  if (route === 'home') return names.rpc(op, HUB_OPS[op].caller ? caller : undefined);
  if (caller === undefined) throw new TypeError(`${op} needs the caller's agent id`);
  switch (route) {
    case 'channel': {
      const channelId = channelIdOf(body);
      if (channelId !== null) return names.rpcIn(op, names.partitionOf(channelId), caller);
      if (names.partitions === 1) return names.rpc(op, caller);
      throw new TypeError(
        `${op} needs a channel_id in a deployment of ${names.partitions} partitions: the channel's partition is computed from it`,
      );
    }
    case 'scattered':
      return names.rpcIn(op, partitionAsked(op, to.partition, names.partitions), caller);
    default: {
      const unreachable: never = route;
      throw new TypeError(`unknown route ${String(unreachable)}`);
    }
  }
}

/** The partition a scattered `op` asks: `partition`, checked against the count, or 0 when there is only one. */
function partitionAsked(op: HubOp, partition: number | undefined, partitions: number): number {
  if (partition === undefined) {
    if (partitions === 1) return 0;
    throw new TypeError(
      `${op} is answered by each of the deployment's ${partitions} partitions for its own channels: options.partition must name one, from 0 to ${partitions - 1}`,
    );
  }
  if (!Number.isInteger(partition) || partition < 0 || partition >= partitions) {
    throw new RangeError(`${op}: partition must be an integer from 0 to ${partitions - 1}, not ${partition}`);
  }
  return partition;
}

/** The `channel_id` of a validated request, or `null` when it has none (a `createChannel` left to the hub to name). */
function channelIdOf(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || !('channel_id' in body)) return null;
  return typeof body.channel_id === 'string' ? body.channel_id : null;
}
