import { Ag2netError, ErrorCode } from '@ag2net/protocol';

/**
 * The turn lock was lost while the turn ran (another replica may hold it now); the turn is aborted with this reason.
 * Code `conflict`. Local, never on the wire.
 */
export class TurnLockLostError extends Ag2netError {
  override readonly name = 'TurnLockLostError';
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.Conflict, message, options);
  }
}

/**
 * How a lease renews its lock: true renewed, false lost for sure; a throw means no answer (tried again at the next
 * period). `signal` aborts when the lease stops: a renewal still waiting for the hub then gives up.
 */
export type RenewLock = (signal: AbortSignal) => Promise<boolean>;

/** Options of `TurnLease`. */
export interface TurnLeaseOptions {
  /** The lock's TTL in ms; the lease renews every third of it. */
  readonly ttlMs: number;
  readonly renew: RenewLock;
  /** When the acquisition that took the lock was sent (`now()` before the request), in ms. */
  readonly acquiredAt: number;
  /** Stops renewing when this aborts (the turn was cancelled for another reason). */
  readonly stop?: AbortSignal;
  /** Called with every renewal that got no answer. Must not throw. */
  readonly onRenewError?: (err: unknown) => void;
  /** The clock, in ms; default `Date.now`. */
  readonly now?: () => number;
}

/**
 * The heartbeat of a held turn lock. Renews every TTL/3 and aborts `signal` with `TurnLockLostError` when a renewal
 * reports the lock lost, or when a whole TTL passed since the last renewal known to have succeeded was *sent*
 * (whatever the reason: no answer, a stalled process). The server frees the key no earlier than TTL after it
 * stored that renewal, which is after it was sent, so this replica gives the turn up before any other replica can
 * take the lock: turns of one channel never overlap as long as the handler stops when its signal aborts.
 */
export class TurnLease {
  readonly #controller = new AbortController();
  /** Aborted by `stop()`: ends a renewal in flight. */
  readonly #stopController = new AbortController();
  readonly #options: TurnLeaseOptions;
  readonly #now: () => number;
  readonly #interval: ReturnType<typeof setInterval>;
  #deadline: ReturnType<typeof setTimeout> | undefined;
  #renewing = false;
  #stopped = false;

  constructor(options: TurnLeaseOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#confirmed(options.acquiredAt);
    this.#interval = setInterval(() => void this.#renew(), Math.max(1, Math.floor(options.ttlMs / 3)));
    options.stop?.addEventListener('abort', this.#onStop, { once: true });
    if (options.stop?.aborted === true) this.stop();
  }

  /** Aborts when the lock is lost. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  readonly #onStop = (): void => this.stop();

  /** Stops renewing (idempotent). The lock then lapses by its TTL unless it is released. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    clearInterval(this.#interval);
    clearTimeout(this.#deadline);
    this.#options.stop?.removeEventListener('abort', this.#onStop);
    this.#stopController.abort();
  }

  /** A renewal sent at `sentAt` succeeded: the lock is ours until `sentAt + ttl` at least. */
  #confirmed(sentAt: number): void {
    clearTimeout(this.#deadline);
    const left = sentAt + this.#options.ttlMs - this.#now();
    this.#deadline = setTimeout(
      () => this.#lose(new TurnLockLostError(`turn lock not renewed within ${this.#options.ttlMs} ms`)),
      Math.max(0, left),
    );
  }

  async #renew(): Promise<void> {
    if (this.#renewing || this.#stopped) return;
    this.#renewing = true;
    const sentAt = this.#now();
    try {
      const held = await this.#options.renew(this.#stopController.signal);
      if (this.#stopped) return;
      if (held) this.#confirmed(sentAt);
      else this.#lose(new TurnLockLostError('turn lock taken by another replica or lapsed'));
    } catch (err) {
      if (!this.#stopped) this.#options.onRenewError?.(err);
    } finally {
      this.#renewing = false;
    }
  }

  #lose(reason: TurnLockLostError): void {
    if (this.#stopped) return;
    this.stop();
    this.#controller.abort(reason);
  }
}
