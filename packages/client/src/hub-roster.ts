import {
  AccessDeniedError,
  DeliveryLagSchema,
  HealthSchema,
  RpcReplySchema,
  type DeliveryLag,
  type Health,
  type HubNames,
} from '@ag2net/protocol';
import { JetStreamApiCodes, JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
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

/**
 * How far the hub's delivery lags (`DeliveryLag`), from its delivery consumer's info on the WAL and the admission
 * time of the oldest envelope not yet fanned out: the first unacked one when some are handed to the hub, else the
 * first undelivered one. Operator only: anyone else gets `AccessDeniedError`. `null` when the hub never provisioned.
 */
export async function deliveryLag(nc: NatsConnection, names: HubNames): Promise<DeliveryLag | null> {
  try {
    const jsm = await jetstreamManager(nc, { checkAPI: false });
    const info = await jsm.consumers.info(names.walStream, names.deliveryConsumer).catch((err: unknown) => {
      if (isNotFound(err)) return null;
      throw err;
    });
    if (info === null) return null;
    const oldestSeq =
      info.num_ack_pending > 0
        ? info.ack_floor.stream_seq + 1
        : info.num_pending > 0
          ? info.delivered.stream_seq + 1
          : null;
    let age: number | null = null;
    if (oldestSeq !== null) {
      // The first WAL message at or after the sequence: a deleted one is skipped, as delivery skips it.
      const msg = await jsm.direct.getMessage(names.walStream, { seq: oldestSeq, next_by_subj: names.walAll });
      age = msg === null ? null : Math.max(0, (Date.now() - msg.time.getTime()) / 1000);
    }
    return DeliveryLagSchema.parse({
      pending: info.num_pending,
      ack_pending: info.num_ack_pending,
      oldest_pending_age_seconds: age,
    });
  } catch (err) {
    if (isPermissionViolation(err)) {
      throw new AccessDeniedError('only the operator may read the delivery consumer', { cause: err });
    }
    throw err;
  }
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
function isPermissionViolation(err: unknown): boolean {
  if (err instanceof errors.PermissionViolationError) return true;
  return err instanceof errors.RequestError && err.cause instanceof errors.PermissionViolationError;
}

function isNoResponders(err: unknown): boolean {
  if (err instanceof errors.NoRespondersError) return true;
  return err instanceof errors.RequestError && err.isNoResponders();
}

function isNotFound(err: unknown): boolean {
  if (!(err instanceof JetStreamApiError)) return false;
  return err.code === JetStreamApiCodes.ConsumerNotFound || err.code === JetStreamApiCodes.StreamNotFound;
}

/** Rejects with the signal's reason when it aborts. */
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const fail = (): void => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
}
