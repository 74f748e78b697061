import { AccessDeniedError, HealthSchema, RpcReplySchema, type Health, type HubNames } from '@ag2net/protocol';
import { errors, type Msg, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from './logger.js';

/** How long `hubRoster` collects answers by default, in ms. */
export const DEFAULT_ROSTER_WINDOW_MS = 1000;

/** Options of `HubClient.hubs`. */
export interface RosterOptions {
  /** How long to collect answers, in ms; default `DEFAULT_ROSTER_WINDOW_MS`. Every hub answers at once. */
  readonly timeout?: number;
  readonly signal?: AbortSignal;
}

/**
 * Every hub of the prefix that answers one roster request (`names.hubsPing`) within the window: the active hub first,
 * then the standbys, each group by hub id. A reply that is not a valid `Health` is dropped with a warning; no hub at
 * all is an empty list. Only the operator may ask: anyone else gets `AccessDeniedError` (NATS refuses the publish).
 */
export async function hubRoster(
  nc: NatsConnection,
  names: HubNames,
  options: RosterOptions & { readonly logger: Logger },
): Promise<Health[]> {
  const { signal, logger } = options;
  signal?.throwIfAborted();
  const collect = async (): Promise<Health[]> => {
    const hubs: Health[] = [];
    try {
      const replies = await nc.requestMany(names.hubsPing, '{}', {
        strategy: 'timer',
        maxWait: options.timeout ?? DEFAULT_ROSTER_WINDOW_MS,
      });
      for await (const msg of replies) {
        const health = healthOf(msg);
        if (typeof health === 'string')
          logger.warn({ subject: names.hubsPing, reason: health }, 'roster reply dropped');
        else hubs.push(health);
      }
    } catch (err) {
      if (isNoResponders(err)) return [];
      if (isPermissionViolation(err)) {
        throw new AccessDeniedError('only the operator may ask for the hub roster', { cause: err });
      }
      throw err;
    }
    return hubs.sort(byRoleThenId);
  };
  if (signal === undefined) return collect();
  return Promise.race([collect(), aborted(signal)]);
}

/** The reply's `Health`, or why it is not one. */
function healthOf(msg: Msg): Health | string {
  let json: unknown;
  try {
    json = msg.json();
  } catch {
    return 'not JSON';
  }
  const reply = RpcReplySchema.safeParse(json);
  if (!reply.success) return 'not an RPC reply';
  if (!reply.data.ok) return `error ${reply.data.error.code}: ${reply.data.error.message}`;
  const health = HealthSchema.safeParse(reply.data.result);
  return health.success ? health.data : 'not a Health';
}

function byRoleThenId(a: Health, b: Health): number {
  if (a.role !== b.role) return a.role === 'active' ? -1 : 1;
  return a.hub_id < b.hub_id ? -1 : a.hub_id > b.hub_id ? 1 : 0;
}

/** NATS refused a publish or subscription; a single request carries the refusal as its error's cause. */
export function isPermissionViolation(err: unknown): boolean {
  if (err instanceof errors.PermissionViolationError) return true;
  return err instanceof errors.RequestError && err.cause instanceof errors.PermissionViolationError;
}

function isNoResponders(err: unknown): boolean {
  if (err instanceof errors.NoRespondersError) return true;
  return err instanceof errors.RequestError && err.isNoResponders();
}

/** Rejects with the signal's reason when it aborts. */
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const fail = (): void => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
}

/** A partition and the hubs that report holding it, each at its epoch (none: nobody serves its channels). */
export interface PartitionHolders {
  partition: number;
  held_by: { hub_id: string; epoch: number }[];
}

/** The partitions `hub` reports holding. A hub from before partitions reports none: serving, it holds the only one. */
export function heldBy(hub: Health): Health['held'] {
  if (hub.held.length === 0 && hub.role === 'active' && hub.partitions === 1) {
    return [{ partition: 0, epoch: hub.epoch }];
  }
  return hub.held;
}

/**
 * Every partition from 0 to `partitions` - 1 with the hubs of a roster (`HubClient.hubs`) holding it, in the roster's
 * order: one holder normally, two for a moment while a partition moves, none while nobody serves it.
 */
export function partitionHolders(hubs: readonly Health[], partitions: number): PartitionHolders[] {
  return Array.from({ length: partitions }, (_, partition) => ({
    partition,
    held_by: hubs.flatMap((h) =>
      heldBy(h)
        .filter((p) => p.partition === partition)
        .map((p) => ({ hub_id: h.hub_id, epoch: p.epoch })),
    ),
  }));
}
