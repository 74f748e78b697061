import { pause } from '@ag2net/protocol/internal';
import type { Logger } from './logger.js';

/** The share of a credential's lifetime after which it is renewed: two thirds. */
export const RENEW_AT_FRACTION = 2 / 3;
/** The longest pause between two attempts of a failed renewal, in ms. */
const RETRY_MAX_MS = 5_000;
/** The shortest pause between two attempts of a failed renewal, in ms. */
const RETRY_MIN_MS = 100;

/** The lifetime of credentials: when they were issued and when they stop being accepted, ms since the epoch. */
export interface CredentialLifetime {
  readonly issuedAtMs: number;
  readonly expiresAtMs: number;
}

/** How long to wait from `nowMs` before renewing credentials of `lifetime`: until 2/3 of it passed, never negative. */
export function renewalDelayMs(nowMs: number, lifetime: CredentialLifetime): number {
  const at = lifetime.issuedAtMs + (lifetime.expiresAtMs - lifetime.issuedAtMs) * RENEW_AT_FRACTION;
  return Math.max(0, Math.floor(at - nowMs));
}

/** Options of `runRenewal`. */
export interface RenewalOptions {
  /** The lifetime of the credentials in use now. */
  readonly lifetime: CredentialLifetime;
  /** Asks the hub for fresh credentials; resolves with their expiry (ms since the epoch). */
  readonly renew: (current: CredentialLifetime) => Promise<{ readonly expiresAtMs: number }>;
  /** Stops the loop (the participant disconnected, its connection closed). */
  readonly signal: AbortSignal;
  readonly logger: Logger;
  /** Who the credentials belong to, for the log: the identity's name and id. */
  readonly agent: string;
  readonly agentId: string;
  /** The clock, ms since the epoch; default `Date.now`. */
  readonly now?: () => number;
}

/**
 * Renews an identity's credentials for as long as `signal` is not aborted: at 2/3 of each lifetime, so that a
 * renewal that fails has the last third to be retried (with backoff) before the connection's JWT expires. Resolves
 * when the loop ends: aborted, or the credentials expired while every renewal failed (logged as an error; the
 * connection is then refused at its next reconnect and the participant's inbox ends). Never rejects.
 */
export async function runRenewal(options: RenewalOptions): Promise<void> {
  const now = options.now ?? Date.now;
  const who = { agent: options.agent, agentId: options.agentId };
  let lifetime = options.lifetime;
  // Credentials without an expiry (an operator's) need no renewal.
  while (!options.signal.aborted && Number.isFinite(lifetime.expiresAtMs)) {
    if (!(await pause(renewalDelayMs(now(), lifetime), options.signal))) return;
    for (let attempt = 1; ; attempt += 1) {
      try {
        const issuedAtMs = now();
        const { expiresAtMs } = await options.renew(lifetime);
        lifetime = { issuedAtMs, expiresAtMs };
        options.logger.debug({ ...who, expiresAt: new Date(expiresAtMs).toISOString() }, 'credentials renewed');
        break;
      } catch (err) {
        if (options.signal.aborted) return;
        const left = lifetime.expiresAtMs - now();
        if (left <= 0) {
          options.logger.error({ ...who, err, attempts: attempt }, 'credentials expired; every renewal failed');
          return;
        }
        const retryInMs = Math.min(RETRY_MAX_MS, Math.max(RETRY_MIN_MS, Math.floor(left / 4)));
        options.logger.warn({ ...who, err, attempts: attempt, retryInMs }, 'credential renewal failed; retrying');
        if (!(await pause(retryInMs, options.signal))) return;
      }
    }
  }
}
