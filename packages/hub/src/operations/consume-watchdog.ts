/** When a consume counts as stalled. */
export interface ConsumeWatchdogOptions {
  /** Silence (no message, no heartbeat) after which the consumer is asked whether it holds work, ms. */
  readonly stallMs: number;
  /** How often the silence is checked, ms. */
  readonly checkMs: number;
  /**
   * Whether the consume is waiting for the server right now: `false` while the reader is busy (its window is full)
   * and so is not reading the iterator, which is no stall.
   */
  readonly waiting: () => boolean;
  /** Messages the consumer holds that this client has not received (`num_pending` of the consumer's info). */
  readonly pending: () => Promise<number>;
  /** Called once when the consume stalled: silent past `stallMs` while the consumer holds messages. */
  readonly onStall: (silentMs: number, pending: number) => void;
  /** The clock, ms; default `performance.now`. */
  readonly now?: () => number;
}

/**
 * Watches one consume of a pull consumer. nats.js re-pulls after two missed heartbeats, but when a consumer's leader
 * moves the re-pull can be lost too (or wait out a long backoff), and the iterator then neither yields nor ends.
 * The watchdog notices that state (no message and no heartbeat for `stallMs` while the consumer reports pending
 * messages) and reports it once, so the owner can stop the consume and start a new one.
 */
export class ConsumeWatchdog {
  readonly #options: ConsumeWatchdogOptions;
  readonly #now: () => number;
  #last: number;
  #timer: NodeJS.Timeout | null = null;
  #checking = false;
  #fired = false;

  constructor(options: ConsumeWatchdogOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => performance.now());
    this.#last = this.#now();
    this.#timer = setInterval(() => void this.#check(), options.checkMs);
  }

  /** A message or a heartbeat arrived: the consume is alive. */
  activity(): void {
    this.#last = this.#now();
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  async #check(): Promise<void> {
    if (this.#checking || this.#fired || this.#timer === null) return;
    if (!this.#options.waiting()) {
      // The reader is not reading: silence now says nothing about the server.
      this.activity();
      return;
    }
    const silentMs = this.#now() - this.#last;
    if (silentMs < this.#options.stallMs) return;
    this.#checking = true;
    try {
      const pending = await this.#options.pending();
      // Something arrived while the consumer was asked, or the watchdog was stopped: no stall.
      if (this.#now() - this.#last < this.#options.stallMs || this.#timer === null) return;
      if (pending > 0) {
        this.#fired = true;
        this.stop();
        this.#options.onStall(silentMs, pending);
      } else {
        // Nothing to deliver: silence is expected (heartbeats aside); look again after another period.
        this.activity();
      }
    } catch {
      // The consumer could not be asked (an election under way): ask again at the next check.
    } finally {
      this.#checking = false;
    }
  }
}
