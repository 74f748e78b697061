import { pause } from '@ag2net/protocol/internal';

/** What the keeper needs of the lease: a renewal that says how it went, and the holder's own view of validity. */
export interface RenewableLease {
  /** `lost` = definitely gone (revision moved or key gone); `unknown` = the request failed or timed out. */
  renew(): Promise<'renewed' | 'lost' | 'unknown'>;
  /** Still valid by the local monotonic clock, minus a safety margin. */
  holds(): boolean;
  /**
   * Lapsed (`holds()` false) but not yet past the time the server may expire the key: nobody can have taken the lease
   * over unless the key's revision moved, so a renewal (a CAS on this holder's revision) that succeeds now proves the
   * lease was never anyone else's and makes it valid again.
   */
  renewable(): boolean;
}

/** Timing of `keepLease`. */
export interface KeepLeaseOptions {
  /** How often a renewal is sent, ms (a third of the lease time). */
  readonly renewMs: number;
  /** How often `holds()` is looked at between renewals, ms. */
  readonly checkMs: number;
  /** Aborted when the term ends for another reason (close, failure): the keeper then returns `stopped`. */
  readonly signal: AbortSignal;
  /** Called with every renewal that failed without proving the lease gone. */
  readonly onUnknown?: (err: unknown) => void;
  /** Called when the lease lapsed and the keeper renews it at once (`true`), and when a renewal made it valid again. */
  readonly onLapse?: (lapsed: boolean) => void;
}

/**
 * Keeps a won lease alive for one term, from acquisition on (also while the hub hydrates). Returns `lost` as soon as
 * a renewal says the lease is gone, or once the lease lapsed by its own clock and can no longer be renewed (see
 * `renewable`), and `stopped` when the term is aborted. One failed renewal is not a loss: it is sent again a quarter of
 * the renewal period later. A lapse is not a loss either while a renewal can still prove nobody took the lease over
 * (a server restart or stall shorter than the lease): meanwhile `holds()` is false, so the holder writes and serves
 * nothing, and the keeper renews every quarter period until the lease is valid again or lost. At most one renewal is in
 * flight; one that answers after the term ended is ignored.
 */
export async function keepLease(lease: RenewableLease, options: KeepLeaseOptions): Promise<'lost' | 'stopped'> {
  const { signal } = options;
  let verdict: 'lost' | null = null;
  let inFlight = false;
  let lapsed = false;
  let nextRenewAt = Date.now() + options.renewMs;
  const retryMs = Math.max(50, Math.floor(options.renewMs / 4));
  while (!signal.aborted) {
    await pause(Math.max(1, Math.min(options.checkMs, nextRenewAt - Date.now())), signal);
    if (signal.aborted) break;
    if (verdict !== null) return 'lost';
    const holds = lease.holds();
    if (!holds && !lease.renewable()) return 'lost';
    if (holds !== !lapsed) {
      lapsed = !holds;
      options.onLapse?.(lapsed);
      if (lapsed) nextRenewAt = Math.min(nextRenewAt, Date.now());
    }
    if (inFlight || Date.now() < nextRenewAt) continue;
    inFlight = true;
    nextRenewAt = Date.now() + options.renewMs;
    void lease
      .renew()
      .catch((err: unknown) => {
        options.onUnknown?.(err);
        return 'unknown' as const;
      })
      .then((result) => {
        inFlight = false;
        if (result === 'lost' && !signal.aborted) verdict = 'lost';
        // A renewal that got no answer is sent again soon, not a whole period later: a short outage must not use up
        // the lease's validity before the next attempt.
        if (result === 'unknown' || (result === 'renewed' && lapsed && !lease.holds())) {
          nextRenewAt = Math.min(nextRenewAt, Date.now() + retryMs);
        }
      });
  }
  return 'stopped';
}

/** Waits `ms`, or less when `signal` aborts first; never rejects (the one `pause` of @ag2net/protocol/internal). */
export { pause };

/** A bounded, jittered backoff: `base · 2^failures`, capped at `max`, then scaled by a random factor in [0.5, 1]. */
export function backoffMs(failures: number, base: number, max: number): number {
  const ceiling = Math.min(max, base * 2 ** Math.min(failures, 16));
  return Math.round(ceiling * (0.5 + Math.random() / 2));
}

/** How often `whileHeld` looks at the lease, ms. */
const HELD_CHECK_MS = 50;

/** Waits for `work` while the lease holds: resolves when it settles or when the lease stops holding, never throws. */
export async function whileHeld(lease: Pick<RenewableLease, 'holds'>, work: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const lapsed = new Promise<void>((resolve) => {
    timer = setInterval(() => {
      if (!lease.holds()) resolve();
    }, HELD_CHECK_MS);
  });
  try {
    await Promise.race([work.catch(() => undefined), lapsed]);
  } finally {
    clearInterval(timer);
  }
}
