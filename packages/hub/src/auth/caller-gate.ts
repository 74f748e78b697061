import { repr } from '@ag2net/protocol/internal';
import {
  AccessDeniedError,
  AuthError,
  ErrorReason,
  HUB_OPS,
  OPERATOR_CALLER,
  UnavailableError,
  type HubOp,
  type RateBlock,
} from '@ag2net/protocol';
import type { CallerOrigin } from './caller-origin.js';
import { RateLimiter } from '../governance/rate-limiter.js';

/** What the hub holds about an identity's credentials, for the gate (`StoredCredentials` in the registry). */
export interface CallerCredentials {
  /** Revoked by the operator and not re-admitted: nothing it calls is served. */
  readonly revoked: boolean;
  /** JWTs issued before this (unix seconds) are retired, but for the one the newest replaced. */
  readonly notBefore: number;
  /** `iat` of the JWT the newest replaced: honoured until it expires. */
  readonly previousIssuedAt: number | null;
}

/** What the gate needs to know about callers. */
export interface CallerDirectory {
  /** The credentials state of a registered identity; `undefined` when the hub keeps none for it. */
  credentialsOf(agentId: string): CallerCredentials | undefined;
}

/** Refuses a JWT older than the one the identity's newest replaced (`CallerCredentials`). */
function checkFresh(state: CallerCredentials, iat: number | null): void {
  if (iat === null || iat >= state.notBefore || iat === state.previousIssuedAt) return;
  throw new AuthError('these credentials were replaced by newer ones: connect with the newest credentials', {
    details: { reason: ErrorReason.CredentialsRetired },
  });
}

function tooMany(retryAfterMs: number): UnavailableError {
  return new UnavailableError(`too many registrations from this connection or address: retry in ${retryAfterMs} ms`, {
    details: { retry_after_ms: retryAfterMs },
  });
}

/** Registration budgets (`register` and `attach`), each a token bucket. */
export interface RegistrationLimits {
  /** Per requesting connection; default 120 a minute, bursts of 50. */
  readonly perConnection?: RateBlock;
  /** Per source address; default 1,200 a minute, bursts of 200. */
  readonly perSource?: RateBlock;
}

const DEFAULT_PER_CONNECTION: RateBlock = { per_minute: 120, burst: 50 };
const DEFAULT_PER_SOURCE: RateBlock = { per_minute: 1200, burst: 200 };
/** Buckets kept per limit before the oldest state is forgotten (a forgotten bucket starts full again). */
const MAX_BUCKETS = 10_000;

/** Options of `CallerGate`. */
export interface CallerGateOptions {
  /**
   * Whether the caller token of an imported request must be the name the server reports for the requester's JWT (a
   * secured deployment, where the hub issued that JWT). Default true.
   */
  readonly bindNames?: boolean;
  readonly registration?: RegistrationLimits;
  /** Wall clock, ms; default `Date.now` (credential times are wall-clock times, as NATS judges them). */
  readonly now?: () => number;
}

/** One request as the gate sees it. */
export interface GateCall {
  readonly op: HubOp;
  /** The caller token of the subject (`''` for operations without one). */
  readonly caller: string;
  readonly origin: CallerOrigin;
}

/**
 * Checks, before the access rules, that an imported request is what the server says it is:
 * - the caller token is the requester's own identity: the `name` of the JWT it connected with (an identity's agent
 *   id, `$operator` for the operator caller). NATS permissions already pin each identity to its own subjects; this
 *   holds even if a permission were wrong;
 * - an identity's JWT is its newest, or the one the newest replaced: an older, retired JWT calls nothing (NATS lets
 *   it connect until it expires); a revoked identity calls nothing;
 * - `register` and `attach` stay within the registration budgets of the requester's connection and address.
 * Requests from the hub's own account (other hubs, the operator's tools) are not limited.
 */
export class CallerGate {
  readonly #bindNames: boolean;
  readonly #now: () => number;
  readonly #perConnection: RateBlock;
  readonly #perSource: RateBlock;
  #connections = new RateLimiter();
  #sources = new RateLimiter();

  constructor(options: CallerGateOptions = {}) {
    this.#bindNames = options.bindNames ?? true;
    this.#now = options.now ?? Date.now;
    this.#perConnection = options.registration?.perConnection ?? DEFAULT_PER_CONNECTION;
    this.#perSource = options.registration?.perSource ?? DEFAULT_PER_SOURCE;
  }

  check(call: GateCall, directory: CallerDirectory): void {
    const { origin } = call;
    const identity = HUB_OPS[call.op].caller && call.caller !== OPERATOR_CALLER;
    const state = identity ? directory.credentialsOf(call.caller) : undefined;
    // The same answer an unregistered caller gets, whoever asks: a revoked identity learns nothing more.
    if (state?.revoked === true) {
      throw new AccessDeniedError(`unknown caller ${repr(call.caller)}`, {
        details: { reason: ErrorReason.UnknownCaller },
      });
    }
    if (origin.kind === 'local') return;
    if (HUB_OPS[call.op].caller && this.#bindNames && origin.name !== call.caller) {
      throw new AccessDeniedError(`caller ${repr(call.caller)} is not the identity of this connection`);
    }
    if (state !== undefined) checkFresh(state, origin.jwtIssuedAt);
    if (call.op === 'register' || call.op === 'attach') this.#takeRegistration(origin);
  }

  #takeRegistration(origin: CallerOrigin & { kind: 'imported' }): void {
    const now = this.#now();
    if (this.#connections.size > MAX_BUCKETS) this.#connections = new RateLimiter();
    if (this.#sources.size > MAX_BUCKETS) this.#sources = new RateLimiter();
    const { connection, host } = origin;
    // A token is spent only when both budgets have one: a refusal by one leaves the other as it was.
    const byConnection = connection === null ? null : this.#connections.take(connection, this.#perConnection, now);
    if (byConnection !== null && !byConnection.ok) throw tooMany(byConnection.retryAfterMs);
    const bySource = host === null ? null : this.#sources.take(host, this.#perSource, now);
    if (bySource !== null && !bySource.ok) {
      if (connection !== null) this.#connections.refund(connection, this.#perConnection);
      throw tooMany(bySource.retryAfterMs);
    }
  }
}
