import type { KV } from '@nats-io/kv';
import type { Lease } from './lease.js';
import { keepLease } from './lease-keeper.js';
import type { Logger } from '../base/logger.js';

/** Why a term (one holding of the lease) ended. */
export type TermEnd = 'closed' | 'lost' | 'failed';

/** What `keepTermLease` needs. */
export interface TermLeaseOptions {
  readonly lease: Lease;
  /** The leases bucket, for the lease time it really has. */
  readonly leases: Pick<KV, 'status'>;
  /** The hub's configured lease time, ms. */
  readonly leaseTtlMs: number;
  readonly epoch: number;
  readonly logger: Logger;
  /** Aborted when the term ends for another reason. */
  readonly signal: AbortSignal;
}

/**
 * Keeps a won lease for one term (`keepLease`), renewing it every sixth of the lease time the bucket really has (the
 * first hub created it): the lease holds for 80 % of its time after the last renewal began, so an outage of the
 * lease bucket (its stream electing a leader after a node died, 4–6 s on R3) is survived when it is shorter than
 * 80 % − 1/6 of the lease, not 80 % − 1/3. Resolves once the period is read; `keeper` settles with the term.
 */
export async function keepTermLease(
  options: TermLeaseOptions,
): Promise<{ readonly keeper: Promise<'lost' | 'stopped'> }> {
  const { lease, epoch, logger } = options;
  const bucketTtlMs = (await options.leases.status()).ttl;
  const ttlMs = bucketTtlMs > 0 ? Math.min(bucketTtlMs, options.leaseTtlMs) : options.leaseTtlMs;
  const renewable = {
    renew: async () => {
      const result = await lease.renew();
      if (result === 'unknown') logger.warn({ epoch }, 'lease renewal failed; retrying');
      return result;
    },
    holds: () => lease.holds(),
    renewable: () => lease.renewable(),
  };
  const keeper = keepLease(renewable, {
    renewMs: Math.max(50, Math.floor(ttlMs / 6)),
    checkMs: 50,
    signal: options.signal,
    onLapse: (lapsed) =>
      lapsed
        ? logger.warn({ epoch }, 'lease lapsed; serving nothing while it is renewed')
        : logger.info({ epoch }, 'lease renewed after a lapse; serving again'),
  });
  return { keeper };
}

/** A loop the hub cannot serve without, by name. */
export interface RequiredLoop {
  readonly what: string;
  /** Settles when the loop ends. */
  readonly done: Promise<unknown>;
}

/**
 * Resolves when the lease is lost (`lost`), the term is aborted (`closed`), or a required loop ends (`failed`, logged;
 * a loop that ends because the term is ending anyway is no failure).
 */
export function untilTermEnds(options: {
  readonly keeper: Promise<'lost' | 'stopped'>;
  readonly signal: AbortSignal;
  readonly loops: readonly RequiredLoop[];
  readonly logger: Logger;
}): Promise<TermEnd> {
  const { signal, logger } = options;
  const stopped = new Promise<'closed'>((resolve) => {
    if (signal.aborted) resolve('closed');
    else signal.addEventListener('abort', () => resolve('closed'), { once: true });
  });
  const loopEnded = ({ what, done }: RequiredLoop): Promise<TermEnd> =>
    done.then(
      (result) => {
        if (signal.aborted) return 'closed';
        logger.error({ err: result instanceof Error ? result : undefined, what }, 'required loop ended');
        return 'failed';
      },
      (err: unknown) => {
        if (signal.aborted) return 'closed';
        logger.error({ err, what }, 'required loop failed');
        return 'failed';
      },
    );
  const lease = options.keeper.then((r) => (r === 'lost' ? ('lost' as const) : ('closed' as const)));
  return Promise.race([stopped, lease, ...options.loops.map(loopEnded)]);
}
