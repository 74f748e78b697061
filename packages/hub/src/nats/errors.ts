import { ErrorReason, HUB_OPS, HubError, UnavailableError, type HubOp } from '@ag2net/protocol';
import { JetStreamApiCodes, JetStreamApiError, JetStreamError } from '@nats-io/jetstream';
import { errors } from '@nats-io/transport-node';
import type { Logger } from '../base/logger.js';

/**
 * How NATS failed to serve a request of the hub, when it did not serve it for a passing reason:
 * - `unsent`: it provably did nothing with the request (no responder, a connection that is closed or draining refused
 *   to send it, JetStream answered 503 while a stream or the meta leader is elected);
 * - `unanswered`: the request may have reached the server, but no answer came (a timeout, a connection lost while
 *   the request was pending), so it may have been applied.
 */
export interface NatsOutage {
  readonly kind: 'unsent' | 'unanswered';
  /** What went wrong, for the reply's message: `a NATS request timed out`, `NATS had no responder`, … */
  readonly reason: string;
}

/** How many `cause` links `natsOutageOf` follows through wrappers before it gives up. */
const MAX_CAUSE_DEPTH = 8;
/** The HTTP-like status codes of JetStream that mean "not now": request timeout and no responders / no leader. */
const JS_TIMEOUT = 408;
const JS_UNAVAILABLE = 503;

/**
 * Whether `thrown` is NATS failing for a passing reason, and how; `null` for anything else (a refusal, a permission
 * violation, a bug). A wrapper (`RequestError`, a plain `Error` with a `cause`) is judged by what it wraps; a
 * `RequestError` that wraps nothing is a request the connection dropped while it was pending.
 */
export function natsOutageOf(thrown: unknown): NatsOutage | null {
  let err = thrown;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && err instanceof Error; depth += 1) {
    const outage = outageOf(err);
    if (outage !== undefined) return outage;
    if (err instanceof HubError || err.cause === undefined) return null;
    err = err.cause;
  }
  return null;
}

/**
 * The outage `err` itself says; `null` when it is none; `undefined` when only its cause can tell (a wrapper:
 * `RequestError`, and `JetStreamNotEnabled`, which nats.js throws both for no responders on a `$JS.API` subject,
 * wrapping the `RequestError`, and for an account without JetStream, wrapping a `JetStreamApiError`).
 */
function outageOf(err: Error): NatsOutage | null | undefined {
  if (err instanceof errors.TimeoutError) return { kind: 'unanswered', reason: 'a NATS request timed out' };
  if (err instanceof errors.NoRespondersError) return { kind: 'unsent', reason: 'NATS had no responder' };
  if (err instanceof errors.ClosedConnectionError || err instanceof errors.DrainingConnectionError) {
    return { kind: 'unsent', reason: 'the NATS connection is closing' };
  }
  if (err instanceof errors.RequestError) {
    if (err.isNoResponders()) return { kind: 'unsent', reason: 'NATS had no responder' };
    // nats.js rejects the requests pending on a connection that disconnects or closes with a bare RequestError.
    return err.cause === undefined
      ? { kind: 'unanswered', reason: 'the NATS connection dropped the request' }
      : undefined;
  }
  if (err instanceof JetStreamApiError) {
    if (err.code === JetStreamApiCodes.JetStreamNotEnabledForAccount) return null;
    return jetStreamStatusOutage(err.status);
  }
  // `JetStreamStatusError` (not exported by nats.js): a pull or a publish answered with a status code.
  if (err instanceof JetStreamError && 'code' in err && typeof err.code === 'number') {
    return jetStreamStatusOutage(err.code);
  }
  return undefined;
}

function jetStreamStatusOutage(status: number): NatsOutage | null {
  if (status === JS_UNAVAILABLE) return { kind: 'unsent', reason: 'JetStream is unavailable' };
  if (status === JS_TIMEOUT) return { kind: 'unanswered', reason: 'a JetStream request timed out' };
  return null;
}

/** Where a failure is translated: the operation it failed, and the logger that is told of a translation. */
export interface OutageContext {
  readonly op: HubOp;
  readonly logger: Logger;
}

/**
 * The hub's one translation of NATS failures into wire errors, for the RPC boundary to apply to a thrown value
 * before `toHubError`. NATS failing for a passing reason while serving `op` becomes `UnavailableError`
 * ("`<op>` could not be served now: `<reason>`; retry"), which clients retry, and is logged once as a warning, not
 * as a failure of the hub. A request that may have reached NATS (`unanswered`) in an operation that is not
 * idempotent is `unavailable` too, but says so in `details.reason` (`may_have_applied`): a retry could apply it
 * twice, so clients resend it only when it is idempotent (as after a timeout of their own). Anything else, network
 * errors included, is returned as it is, so applying it twice changes nothing.
 */
export function unavailableOnNatsOutage(thrown: unknown, context: OutageContext): unknown {
  if (thrown instanceof HubError) return thrown;
  const outage = natsOutageOf(thrown);
  if (outage === null) return thrown;
  const { op, logger } = context;
  logger.warn({ err: thrown, op, reason: outage.reason }, 'rpc answered unavailable');
  if (outage.kind === 'unanswered' && !HUB_OPS[op].idempotent) {
    return new UnavailableError(`${op} could not be completed: ${outage.reason}, and it may have been applied`, {
      cause: thrown,
      details: { reason: ErrorReason.MayHaveApplied },
    });
  }
  return new UnavailableError(`${op} could not be served now: ${outage.reason}; retry`, { cause: thrown });
}
