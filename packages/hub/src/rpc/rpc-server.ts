import {
  HUB_OPS,
  HUB_OP_NAMES,
  routeOf,
  InternalError,
  InvalidRequestError,
  MAX_REQUEST_DEPTH,
  type HubNames,
  type HubOp,
  type HubResponse,
  type WireError,
} from '@ag2net/protocol';
import { clip, jsonDepthExceeds, toHubError, type HubRequestParsed, formatIssues } from '@ag2net/protocol/internal';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import type { z } from 'zod';
import { authorize, callerOf, type AccessDirectory, type CheckedCaller } from '../operations/access.js';
import { CallerGate, type CallerDirectory, type RegistrationLimits } from '../auth/caller-gate.js';
import { CallerOrigins } from '../auth/caller-origin.js';
import type { Logger } from '../base/logger.js';
import { leaseLapsed } from '../nats/fenced-kv.js';
import { unavailableOnNatsOutage } from '../nats/errors.js';
import type { Outbox } from '../nats/outbox.js';
import { notify, type HubObserver } from '../observe/observer.js';

/**
 * One handler per operation. `caller` is the caller `authorize` let through: `''` for public operations, else a
 * registered identity (for participant operations, a participant of the request's channel) or `OPERATOR_CALLER` on
 * operations whose `operatorReads` is true.
 */
export type HubHandlers = {
  readonly [Op in HubOp]: (
    request: HubRequestParsed<Op>,
    caller: CheckedCaller,
  ) => Promise<HubResponse<Op>> | HubResponse<Op>;
};

/** The longest error message a reply carries; longer ones are cut (they quote user input at most bounded). */
export const MAX_ERROR_MESSAGE_CHARS = 1024;
/** The most bytes of JSON an error's `details` may take in a reply; larger details are left out. */
const MAX_ERROR_DETAILS_BYTES = 1024;
/**
 * How long a request that finds this hub's lease lapsed waits before it is answered `unavailable`, ms. A successor
 * that took the lease over serves the same subjects, so its answer reaches the requester first and the refusal is
 * dropped; with no successor (a NATS stall this hub rides out) the requester learns to back off after this grace.
 */
export const LAPSED_REFUSAL_GRACE_MS = 500;
/** The most requests that wait out the grace at once; beyond it a request is refused at once. */
const MAX_LAPSED_WAITING = 1_024;
/** NATS's default `max_payload`, used while the connection has not reported its own. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

/**
 * Serves the hub's operations on `<prefix>.hub.v1.<op>[.<caller>]`, in no queue group: only the lease holder
 * subscribes, from the start of its term to its step-down, so every request reaches it. A deposed holder that cannot
 * tell yet (a paused process keeps its connection and its subscriptions) also receives every request instead of
 * drawing half of them away from its successor, as a shared queue group would. Such a hub refuses with `unavailable`
 * (its lease lapsed by its own clock) only after `LAPSED_REFUSAL_GRACE_MS`, so that its successor's answer, sent for
 * the same request, is the one the requester gets.
 *
 * The boundary cannot throw: every request is answered or, when answering itself fails, dropped with a log line,
 * inside a guard. Before parsing, a request larger than its op's `maxRequestBytes` or nesting deeper than
 * `MAX_REQUEST_DEPTH` is refused with `invalid_request`; then it is parsed with its zod schema, and validation
 * errors are one bounded line. Then `authorize` applies the op's access class (`HUB_OPS[op].access`, `operatorReads`)
 * to the caller of the subject, so no handler runs for a caller the class refuses. Every failure becomes
 * `{ ok: false, error: { code, message, details? } }` with a message of at most `MAX_ERROR_MESSAGE_CHARS`; a reply
 * that would not fit the connection's `max_payload` is replaced by a short error saying so.
 */
export class RpcServer {
  #subs: Subscription[] = [];
  #observer: HubObserver = {};
  /** Requests waiting out `LAPSED_REFUSAL_GRACE_MS`. */
  #lapsedWaiting = 0;
  readonly #origins: CallerOrigins;
  readonly #gate: CallerGate;
  readonly #serving: () => boolean;
  readonly #partition: { readonly index: number; readonly home: boolean };
  readonly #readThrough: ((refs: ReadThrough) => Promise<void>) | null;
  readonly #send: (send: () => void) => void;
  private readonly logger: Logger;

  constructor(
    private readonly nc: NatsConnection,
    private readonly names: HubNames,
    options: RpcServerOptions,
  ) {
    this.logger = options.logger;
    this.#serving = options.serving ?? (() => true);
    this.#partition = options.partition ?? { index: 0, home: true };
    this.#readThrough = options.readThrough ?? null;
    const { outbox } = options;
    this.#send = outbox === undefined ? (send) => send() : (send) => outbox.send(send);
    this.#origins = new CallerOrigins({ importAccount: options.importAccount });
    this.#gate = new CallerGate({
      bindNames: options.importAccount !== null,
      ...(options.registration === undefined ? {} : { registration: options.registration }),
    });
  }

  /**
   * Serves `handlers`, each behind the origin check, the caller gate (`callers`) and the access rules, which look
   * callers and channels up in `directory`.
   */
  start(handlers: HubHandlers, directory: AccessDirectory, callers: CallerDirectory): void {
    const { index, home } = this.#partition;
    if (home && this.names.partitions > 1) this.#refuseUnrouted();
    for (const op of HUB_OP_NAMES) {
      const route = routeOf(op);
      if (route === 'home' && !home) continue;
      const subject =
        route === 'home' ? this.names.rpcListen(op, HUB_OPS[op].caller) : this.names.rpcListenIn(op, index);
      const sub = this.nc.subscribe(subject, {
        callback: (err, msg) => {
          if (err !== null) {
            this.logger.error({ err, op }, 'rpc subscription failed');
            return;
          }
          // Fire and forget: `#handle` never rejects; the catch is the last line of defence.
          this.#handle(op, msg, { handlers, directory, callers }).catch((thrown: unknown) =>
            this.logger.error({ err: thrown, op }, 'rpc request dropped'),
          );
        },
      });
      this.#subs.push(sub);
    }
  }

  /**
   * On the home partition of several: answers a channel operation sent without a partition (a client that does not
   * route) with `invalid_request` naming the deployment's partition count, so that it fails at once and says why
   * instead of finding no responder until its retries run out.
   */
  #refuseUnrouted(): void {
    const { partitions } = this.names;
    for (const op of HUB_OP_NAMES) {
      if (routeOf(op) === 'home') continue;
      const sub = this.nc.subscribe(this.names.rpcListen(op, true), {
        callback: (err, msg) => {
          if (err !== null || msg.reply === undefined || !this.#origins.of(msg).ok) return;
          const refusal = new InvalidRequestError(
            `${op} must be sent to its partition's subject, <prefix>.hub.v1.${op}.<partition>.<caller>: this ` +
              `deployment's channels are spread over ${partitions} partitions (Health.partitions)`,
          );
          msg.respond(this.#errorReply(op, refusal));
        },
      });
      this.#subs.push(sub);
    }
  }

  /** From now on tells `observer` the outcome of every request, refusals before any handler runs included. */
  observe(observer: HubObserver): void {
    this.#observer = observer;
  }

  /**
   * Settles when a subscription ends without `stop()` (the connection closed, a permission was denied): the hub
   * can no longer serve requests. Resolves to the error when there was one.
   */
  closed(): Promise<void | Error> {
    return Promise.race(this.#subs.map((s) => s.closed));
  }

  /** Stops taking requests; requests in flight finish. */
  async stop(): Promise<void> {
    const subs = this.#subs;
    this.#subs = [];
    await Promise.all(subs.map((s) => s.drain().catch(() => undefined)));
  }

  async #handle<Op extends HubOp>(op: Op, msg: Msg, service: Served): Promise<void> {
    const verdict = this.#origins.of(msg);
    if (!verdict.ok) {
      // Nothing is done and nothing is published for it: an answer could only land where the requester pointed.
      this.logger.warn({ op, reason: verdict.reason }, 'rpc request dropped unanswered');
      const { requestDropped } = this.#observer;
      if (requestDropped !== undefined) notify(this.logger, () => requestDropped({ op, reason: verdict.reason }));
      return;
    }
    let reply: string;
    const started = performance.now();
    let code: string | null = null;
    try {
      if (!this.#serving() && !(await this.#servingAfterGrace())) throw leaseLapsed();
      const claimed = HUB_OPS[op].caller ? callerOf(msg.subject) : '';
      this.#gate.check({ op, caller: claimed, origin: verdict.origin }, service.callers);
      const request = parseRequest(op, msg);
      this.#checkPartition(op, request);
      if (this.#readThrough !== null) {
        const agents = [claimed, ...participantsOf(request)].filter(
          (id) => id !== '' && !service.directory.isRegistered(id),
        );
        const tasks = tasksOf(request).filter((id) => service.directory.task(id) === undefined);
        if (agents.length > 0 || tasks.length > 0) await this.#readThrough({ agents, tasks });
      }
      const caller = authorize({ op, caller: claimed, request }, service.directory);
      const handler: (request: HubRequestParsed<Op>, caller: CheckedCaller) => unknown = service.handlers[op];
      const result = await handler(request, caller);
      reply = JSON.stringify({ ok: true, result });
    } catch (thrown) {
      const failure = unavailableOnNatsOutage(thrown, { op, logger: this.logger });
      code = toHubError(failure).code;
      reply = this.#errorReply(op, failure);
    }
    const { requestFinished } = this.#observer;
    if (requestFinished !== undefined) {
      notify(this.logger, () => requestFinished({ op, code, durationMs: performance.now() - started }));
    }
    if (!msg.reply) return;
    const limit = this.nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD;
    const size = Buffer.byteLength(reply);
    if (size > limit) {
      reply = this.#errorReply(
        op,
        new InternalError(`${op} reply of ${size} bytes exceeds the connection's max_payload of ${limit} bytes`, {
          details: { limit, size },
        }),
      );
    }
    const answer = reply;
    this.#send(() => {
      try {
        msg.respond(answer);
      } catch (err) {
        this.logger.error({ err, op }, 'rpc reply failed');
      }
    });
  }

  /** Waits `LAPSED_REFUSAL_GRACE_MS` (unless too many wait already); true when the lease holds again by then. */
  /**
   * A channel operation reached the owner of the partition its subject names: the channel must be in that partition
   * (a request for another partition's channel would have two hubs write one channel), and a creation must name the
   * channel it creates. With one partition every channel is in it.
   */
  #checkPartition(op: HubOp, request: unknown): void {
    if (this.names.partitions === 1 || routeOf(op) !== 'channel') return;
    const channelId = (request as { readonly channel_id?: string | null }).channel_id;
    if (channelId === null || channelId === undefined) {
      throw new InvalidRequestError(`${op} needs a channel_id: this deployment's channels are in partitions`);
    }
    const k = this.names.partitionOf(channelId);
    if (k !== this.#partition.index) {
      throw new InvalidRequestError(
        `channel ${clip(channelId, 80)} is in partition ${k}, not ${this.#partition.index}: ` +
          `send ${op} to ${this.names.rpcIn(op, k, '<caller>')}`,
      );
    }
  }

  async #servingAfterGrace(): Promise<boolean> {
    if (this.#lapsedWaiting >= MAX_LAPSED_WAITING) return false;
    this.#lapsedWaiting += 1;
    try {
      await new Promise((resolve) => setTimeout(resolve, LAPSED_REFUSAL_GRACE_MS));
    } finally {
      this.#lapsedWaiting -= 1;
    }
    return this.#serving();
  }

  /** The reply for a failure, bounded in size; logs `internal` failures, which are the hub's fault. */
  #errorReply(op: HubOp, thrown: unknown): string {
    const err = toHubError(unavailableOnNatsOutage(thrown, { op, logger: this.logger }));
    if (err.code === 'internal') this.logger.error({ err: thrown, op }, 'rpc failed');
    else this.logger.debug({ op, code: err.code }, 'rpc rejected');
    return errorReplyText(err);
  }
}

/** Options of `RpcServer`. */
export interface RpcServerOptions {
  readonly logger: Logger;
  /**
   * The account identities' requests are imported from (a secured hub's issuer account): requests imported from any
   * other account are dropped, and a caller token must name the requester's own JWT. `null` on a hub that issues no
   * credentials.
   */
  readonly importAccount: string | null;
  /** Budgets of `register` and `attach` per connection and per address; default `CallerGate`'s. */
  readonly registration?: RegistrationLimits;
  /**
   * Asked before each request is served: `false` answers it `unavailable` (this hub's lease lapsed and is being
   * renewed, so a successor may already serve), which clients retry, unless it is true again after
   * `LAPSED_REFUSAL_GRACE_MS`. Default: always serving.
   */
  readonly serving?: () => boolean;
  /**
   * The partition this server serves: its channel operations on `rpcListenIn(op, index)`, and, when `home`, the
   * operations about no single channel. Default partition 0, home (every operation of a hub with one partition).
   */
  readonly partition?: { readonly index: number; readonly home: boolean };
  /**
   * Reads agents and tasks through to KV before a request naming ones the directory does not know (a hub that
   * follows the registry and the tasks, which may not have seen an agent registered or a task observed a moment ago):
   * the caller and, for a creation, its participants; the tasks a post names. Default none.
   */
  readonly readThrough?: (refs: ReadThrough) => Promise<void>;
  /** Sends the replies with the hub's other messages of the same turn (`Outbox.send`). Default: each at once. */
  readonly outbox?: Pick<Outbox, 'send'>;
}

/** What a request names that the directory may not know yet. */
export interface ReadThrough {
  readonly agents: readonly string[];
  readonly tasks: readonly string[];
}

/** The tasks a request names (a post's `task_id` and its event's `task_id`), for `readThrough`. */
function tasksOf(request: unknown): string[] {
  const { task_id: taskId, event_data: data } = request as {
    readonly task_id?: unknown;
    readonly event_data?: unknown;
  };
  const eventTask = typeof data === 'object' && data !== null ? (data as { readonly task_id?: unknown }).task_id : null;
  return [taskId, eventTask].filter((id): id is string => typeof id === 'string' && id !== '');
}

/** The participants a request names (a channel creation's), for `readThrough`. */
function participantsOf(request: unknown): string[] {
  const participants = (request as { readonly participants?: unknown }).participants;
  return Array.isArray(participants) ? participants.filter((p): p is string => typeof p === 'string') : [];
}

/** What `start` serves. */
interface Served {
  readonly handlers: HubHandlers;
  readonly directory: AccessDirectory;
  readonly callers: CallerDirectory;
}

/** An error reply of the hub's NATS boundary: `{ ok: false, error }`, bounded in size. */
export function errorReplyText(thrown: unknown): string {
  return JSON.stringify({ ok: false, error: boundedWire(toHubError(thrown).toWire()) });
}

/** The wire error with its message cut to `MAX_ERROR_MESSAGE_CHARS` and oversized `details` left out. */
function boundedWire(wire: WireError): WireError {
  const message = clip(wire.message, MAX_ERROR_MESSAGE_CHARS);
  if (wire.details === undefined) return { code: wire.code, message };
  let detailsBytes: number;
  try {
    detailsBytes = Buffer.byteLength(JSON.stringify(wire.details));
  } catch {
    detailsBytes = Infinity;
  }
  return detailsBytes <= MAX_ERROR_DETAILS_BYTES
    ? { code: wire.code, message, details: wire.details }
    : { code: wire.code, message };
}

/** The request, checked for size and depth before parsing and then validated by the op's schema. */
function parseRequest<Op extends HubOp>(op: Op, msg: Msg): HubRequestParsed<Op> {
  // The schema looked up by `op` is the one `HubRequestParsed<Op>` is inferred from.
  const spec = { label: op, limit: HUB_OPS[op].maxRequestBytes, schema: HUB_OPS[op].request as z.ZodType };
  return parseBoundedRequest(msg, spec) as HubRequestParsed<Op>;
}

/**
 * A request of the hub's NATS boundary (an RPC op, the roster ping), `spec.label` naming it in messages: refused
 * with `invalid_request` past `spec.limit` bytes or `MAX_REQUEST_DEPTH` levels before it is parsed, when it is not JSON, or
 * when `spec.schema` refuses it; an empty body is `{}`.
 */
export function parseBoundedRequest<S extends z.ZodType>(
  msg: Msg,
  spec: { readonly label: string; readonly limit: number; readonly schema: S },
): z.output<S> {
  const { label, limit, schema } = spec;
  const size = msg.data.length;
  if (size > limit) {
    throw new InvalidRequestError(`${label} request of ${size} bytes exceeds the limit of ${limit} bytes`, {
      details: { limit, size },
    });
  }
  const text = size === 0 ? '{}' : msg.string();
  if (jsonDepthExceeds(text, MAX_REQUEST_DEPTH)) {
    throw new InvalidRequestError(`${label} request nests deeper than ${MAX_REQUEST_DEPTH} levels`, {
      details: { limit: MAX_REQUEST_DEPTH },
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new InvalidRequestError(`${label} request is not valid JSON`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new InvalidRequestError(formatIssues(`invalid ${label} request`, parsed.error.issues));
  return parsed.data;
}
