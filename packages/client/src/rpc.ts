import {
  AccessDeniedError,
  Ag2netError,
  ErrorCode,
  HUB_OPS,
  HubError,
  InternalError,
  RpcReplySchema,
  errorFromWire,
  hubNames,
  mayResend,
  newId,
  routeOf,
  type HubNames,
  type HubOp,
  type HubRequest,
  type HubResponse,
} from '@ag2net/protocol';
import { errors, type NatsConnection, type PermissionViolationError } from '@nats-io/transport-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { PartitionCount, routedSubject, type DiscoveryBudget } from './partition-routing.js';

/**
 * Default time to wait for one attempt of every operation but `post`, in ms. A read may scan a long audit trail or
 * log, and a resend would start the scan over; an operation that is not idempotent is not resent after a timeout (it
 * may have been applied). Both wait long.
 */
export const DEFAULT_RPC_TIMEOUT_MS = 10_000;

/**
 * Default time to wait for one attempt of a `post`, in ms. A post's work on the hub is one append, and a post that
 * timed out is resent (its client-minted id admits it once), so a post that reached a hub which then died, or was
 * paused and deposed, is sent again to its successor after this long instead of after `DEFAULT_RPC_TIMEOUT_MS`: a
 * takeover takes about 1.5 s.
 */
export const DEFAULT_POST_RPC_TIMEOUT_MS = 3_000;

/** How long one attempt of `op` waits by default: `DEFAULT_POST_RPC_TIMEOUT_MS` for a post, else `DEFAULT_RPC_TIMEOUT_MS`. */
export function defaultAttemptTimeoutMs(op: HubOp): number {
  return op === 'post' ? DEFAULT_POST_RPC_TIMEOUT_MS : DEFAULT_RPC_TIMEOUT_MS;
}

/** Options of every call: cancellation and time limits. */
export interface CallOptions {
  readonly signal?: AbortSignal;
  /**
   * Time for one attempt, in ms; default the client's `requestTimeoutMs`, else `defaultAttemptTimeoutMs(op)` (channel
   * creation waits for the handshake).
   */
  readonly timeout?: number;
  /** How long to keep sending a request that may be retried, in ms; default the client's `retryForMs`. */
  readonly retryForMs?: number;
}

/**
 * Options of `HubRpc.call` and `HubClient.call`: the caller's identity, and the partition of an operation each
 * partition answers, besides cancellation and time limits.
 */
export interface HubCallOptions extends CallOptions {
  /** The calling agent's id; required by operations whose subject carries the caller (`HUB_OPS[op].caller`). */
  readonly caller?: string;
  /**
   * The partition asked by an operation that each partition answers for its own channels (`SCATTERED_OPS`:
   * `listChannels`, `pendingTurnsFor`, `deliveryLag`), from 0 to the deployment's partition count - 1. Required
   * when the deployment has more than one partition (`TypeError` without it, `RangeError` out of range); default 0
   * with one. Ignored by every other operation: an operation about one channel goes to that channel's partition.
   */
  readonly partition?: number;
}

/** Options of `HubRpc`. */
export interface HubRpcOptions {
  /** The hub's prefix; default `ag2`. */
  readonly prefix?: string;
  /** How long to keep retrying when no hub answers (failover), in ms; default 30 000. */
  readonly retryForMs?: number;
  /**
   * How long one attempt waits for its reply when the call gives no `timeout`, in ms, for every operation; default
   * `defaultAttemptTimeoutMs(op)`: 3 000 for a post, 10 000 for the others.
   */
  readonly requestTimeoutMs?: number;
  /**
   * How many partitions the deployment spreads its channels over (`Health.partitions`), an integer from 1 to
   * `MAX_PARTITIONS`, when known up front (`RangeError` otherwise). Default: asked of the hub with `health`, once,
   * before the first operation about channels (see `HubRpc.partitions`).
   */
  readonly partitions?: number;
}

/**
 * The hub could not be reached in time: no responder or every attempt timed out. Code `unavailable`, retryable (a
 * later call may find a hub). Local: the client raises it, the hub never answers it.
 */
export class HubUnavailableError extends Ag2netError {
  override readonly name = 'HubUnavailableError';
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.Unavailable, message, options);
  }
}

/**
 * Typed request/reply to the hub. Requests are validated before they leave, replies when they arrive; a hub error
 * is rethrown as its typed `HubError`, and a request NATS refuses (a permissions violation: the connection's
 * credentials do not allow the operation's subject, or its reply inbox) as `AccessDeniedError`, never resent. When
 * no hub answers (failover in progress, or a partition moving to another hub), the hub answers `unavailable`,
 * or an attempt of an idempotent operation times out, the same request is sent again until `retryForMs` runs out:
 * posts carry a client-minted envelope id, so a retried post is admitted once. A non-idempotent operation
 * (`HUB_OPS[op].idempotent === false`) that timed out, or was answered `unavailable` with `details.reason`
 * `may_have_applied`, is not resent: it may have been applied. Every other hub error is final and thrown at once
 * (`mayResend`).
 *
 * Each request goes where its operation is served (`routeOf`): an operation about one channel to the channel's
 * partition (`names.rpcIn(op, partitionOf(channel_id, P), caller)`), an operation each partition answers for its
 * own channels to the partition named by `HubCallOptions.partition`, any other to the home partition
 * (`names.rpc(op, caller?)`). With one partition (P = 1) every subject is `names.rpc(op, caller?)`.
 */
export class HubRpc {
  /**
   * The names of the hub's prefix with one partition: the subjects of the home partition's operations
   * (`names.rpc`), the inboxes, streams and buckets. The subjects of a partitioned deployment's channel operations
   * are not among them: `call` computes those.
   */
  readonly names: HubNames;
  readonly #nc: NatsConnection;
  readonly #retryForMs: number;
  readonly #requestTimeoutMs: number | null;
  readonly #partitions: PartitionCount;

  /** Throws `RangeError` when `options.partitions` is given and is not an integer from 1 to `MAX_PARTITIONS`. */
  constructor(nc: NatsConnection, options: HubRpcOptions = {}) {
    this.#nc = nc;
    this.names = hubNames(options.prefix);
    this.#retryForMs = options.retryForMs ?? 30_000;
    this.#requestTimeoutMs = options.requestTimeoutMs ?? null;
    this.#partitions = new PartitionCount(this.names.prefix, options.partitions, (budget) =>
      this.#askPartitions(budget),
    );
  }

  /**
   * How many partitions the deployment spreads its channels over: `HubRpcOptions.partitions`, else `Health.partitions`
   * of the hub's `health`, asked once (by this or the first call of an operation about channels) and kept. An ask
   * that failed is not kept: the next call asks again.
   */
  async partitions(options: CallOptions = {}): Promise<number> {
    const deadline = Date.now() + (options.retryForMs ?? this.#retryForMs);
    const names = await this.#partitions.names({ signal: options.signal, timeout: options.timeout, deadline });
    return names.partitions;
  }

  /**
   * Calls `op` as `options.caller` (required for operations whose subject carries the caller). The first call of an
   * operation about channels asks the hub for the partition count first (`partitions`), within this call's signal
   * and `retryForMs`.
   */
  async call<Op extends HubOp>(
    op: Op,
    request: HubRequest<Op>,
    options: HubCallOptions = {},
  ): Promise<HubResponse<Op>> {
    const spec = HUB_OPS[op];
    const callerId = options.caller;
    if (spec.caller && callerId === undefined) throw new TypeError(`${op} needs the caller's agent id`);
    const body = spec.request.parse(
      op === 'post' ? withEnvelopeId(request) : op === 'createChannel' ? withChannelId(request) : request,
    );
    const retryForMs = options.retryForMs ?? this.#retryForMs;
    const deadline = Date.now() + retryForMs;
    const names = routeOf(op) === 'home' ? this.names : await this.#namesFor(op, { ...options, deadline, retryForMs });
    const subject = routedSubject(op, body, { names, caller: callerId, partition: options.partition });
    const payload = JSON.stringify(body);
    for (let attempt = 0; ; attempt += 1) {
      options.signal?.throwIfAborted();
      try {
        const timeout = options.timeout ?? this.#attemptTimeoutMs(op);
        const msg = await this.#nc.request(subject, payload, { timeout });
        return decodeReply(op, msg.string());
      } catch (err) {
        const refusal = permissionRefusal(err);
        if (refusal !== null) throw new AccessDeniedError(refusedMessage(op, refusal), { cause: err });
        if (!isRetryable(err, spec.idempotent)) throw err;
        if (Date.now() >= deadline) {
          throw new HubUnavailableError(`no hub answered ${op} within ${retryForMs} ms`, { cause: err });
        }
        await sleep(Math.min(50 * 2 ** attempt, 1000), undefined, { signal: options.signal });
      }
    }
  }

  /** The deployment's names for a call of `op`; a hub that did not answer the partition count is named in the error. */
  async #namesFor(
    op: HubOp,
    call: CallOptions & { readonly deadline: number; readonly retryForMs: number },
  ): Promise<HubNames> {
    try {
      return await this.#partitions.names({ signal: call.signal, timeout: call.timeout, deadline: call.deadline });
    } catch (err) {
      if (!(err instanceof HubUnavailableError)) throw err;
      throw new HubUnavailableError(
        `no hub answered ${op} within ${call.retryForMs} ms: its health request, for the deployment's partition count, went unanswered`,
        { cause: err },
      );
    }
  }

  /** Asks the hub's `health` for the partition count, within what the asking call has left. */
  async #askPartitions(budget: DiscoveryBudget): Promise<number> {
    const health = await this.call(
      'health',
      {},
      {
        ...(budget.signal === undefined ? {} : { signal: budget.signal }),
        timeout: Math.min(budget.timeout ?? Infinity, this.#attemptTimeoutMs('health')),
        retryForMs: Math.max(0, budget.deadline - Date.now()),
      },
    );
    return health.partitions;
  }

  #attemptTimeoutMs(op: HubOp): number {
    return this.#requestTimeoutMs ?? defaultAttemptTimeoutMs(op);
  }
}

/**
 * The permissions violation NATS answered a request with, or `null` for any other failure. nats.js rejects the
 * request it refused to publish (and every pending request when it refused the reply inbox's subscription) with a
 * `RequestError` whose cause is the violation.
 */
function permissionRefusal(err: unknown): PermissionViolationError | null {
  if (err instanceof errors.PermissionViolationError) return err;
  if (err instanceof errors.RequestError && err.cause instanceof errors.PermissionViolationError) return err.cause;
  return null;
}

/** What a refused request says: the operation and the subject NATS refused (the request's, or its reply inbox's). */
function refusedMessage(op: HubOp, refusal: PermissionViolationError): string {
  return refusal.operation === 'subscription'
    ? `this connection may not call ${op} (NATS refused the subscription to its reply inbox ${refusal.subject})`
    : `this connection may not call ${op} (NATS refused ${refusal.subject})`;
}

/** A post without an envelope id gets one here, so that every retry of it carries the same id. */
function withEnvelopeId(request: unknown): unknown {
  if (typeof request !== 'object' || request === null) return request;
  if ('envelope_id' in request && typeof request.envelope_id === 'string' && request.envelope_id !== '') return request;
  return { ...request, envelope_id: newId() };
}

/**
 * A creation names the channel it creates: a retried creation is then the same creation (the hub answers the channel
 * it created on the first try), and a partitioned deployment routes it by that id.
 */
function withChannelId(request: unknown): unknown {
  if (typeof request !== 'object' || request === null) return request;
  if ('channel_id' in request && typeof request.channel_id === 'string' && request.channel_id !== '') return request;
  return { ...request, channel_id: newId() };
}

/**
 * A request is sent again when no hub got it (no responders), when the hub's answer allows it (`mayResend`: an
 * `unavailable`), or when it timed out and the operation is idempotent (a timed-out request may have been applied).
 */
function isRetryable(err: unknown, idempotent: boolean): boolean {
  if (err instanceof HubError) return mayResend(err, { idempotent });
  if (err instanceof errors.TimeoutError) return idempotent;
  if (err instanceof errors.RequestError) return err.isNoResponders();
  if (err instanceof errors.NoRespondersError) return true;
  return false;
}

function decodeReply<Op extends HubOp>(op: Op, text: string): HubResponse<Op> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new InternalError(`hub sent a reply to ${op} that is not JSON`, { cause: err });
  }
  const reply = RpcReplySchema.safeParse(json);
  if (!reply.success) throw new InternalError(`hub sent a malformed reply to ${op}`, { cause: reply.error });
  if (!reply.data.ok) throw errorFromWire(reply.data.error);
  const result = HUB_OPS[op].response.safeParse(reply.data.result);
  if (!result.success) throw new InternalError(`hub sent an invalid ${op} result`, { cause: result.error });
  // The schema looked up by `op` is the one `HubResponse<Op>` is inferred from; TypeScript cannot follow the index.
  return result.data as HubResponse<Op>;
}
