import type { HubRpc } from '@ag2net/client';
import { EV_TEXT } from '@ag2net/protocol';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { BENCH_TEXT } from './poster.js';

/** Where a loop posts: a channel, and the participant who posts in it. */
export interface PostTarget {
  readonly channelId: string;
  readonly senderId: string;
}

/** One acked post: when it was sent and acked (`performance.now()`), and what the hub answered. */
export interface AckedPost {
  /** The loop that sent it; -1 for a probe. */
  readonly loop: number;
  readonly sentAt: number;
  readonly ackedAt: number;
  readonly channelId: string;
  readonly envelopeId: string;
  readonly sequence: number;
}

/** A post whose call threw: its retries ran out, or the hub refused it for good. */
export interface FailedPost {
  readonly loop: number;
  readonly sentAt: number;
  readonly error: unknown;
}

/** Options of `PostLoad.start`. */
export interface PostLoadOptions {
  /** The client of the loops: it retries as clients do (no responders, `unavailable`, a timed-out attempt). */
  readonly rpc: HubRpc;
  /** One closed loop per target, one post in flight each. */
  readonly targets: readonly PostTarget[];
  /** Pause between a loop's ack and its next post, in ms. */
  readonly paceMs: number;
  /** Where the probes post: each of these gets one probe post every `probeEveryMs`. */
  readonly probes: readonly PostTarget[];
  /** A probe post is sent to each probe target this often, in ms, whatever the others do. */
  readonly probeEveryMs: number;
  /** One attempt each, waiting this long for its ack, in ms; a probe is never retried. */
  readonly probeTimeoutMs: number;
}

/**
 * A closed-loop load of text posts (each loop awaits its post's ack, pauses `paceMs`, posts again) with open-loop
 * probes beside it: one single-attempt post into each probe channel every `probeEveryMs`, so that the moment a hub
 * acks again in that channel after an outage is seen to within that interval, whatever the loops are waiting for (a post in flight to a hub that died waits out
 * its attempt's timeout). Everything acked is recorded, to be found in the log afterwards.
 */
export class PostLoad {
  readonly acked: AckedPost[] = [];
  readonly failed: FailedPost[] = [];
  /** Per loop, when its last acked post was sent. */
  readonly #lastAckedSend: number[];
  readonly #probes = new Set<Promise<void>>();
  #stopping = false;
  #loops: Promise<void> = Promise.resolve();
  #probeTimer: NodeJS.Timeout | null = null;

  private constructor(private readonly options: PostLoadOptions) {
    this.#lastAckedSend = options.targets.map(() => -Infinity);
  }

  static start(options: PostLoadOptions): PostLoad {
    const load = new PostLoad(options);
    load.#loops = Promise.all(options.targets.map((target, i) => load.#loop(i, target))).then(() => undefined);
    load.#probeTimer = setInterval(() => load.#sendProbes(), options.probeEveryMs);
    return load;
  }

  /**
   * Resolves once every loop has had an ack of a post it sent at or after `since`: every channel is flowing again.
   * Throws after `timeoutMs`.
   */
  async everyLoopAckedSince(since: number, timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!this.#lastAckedSend.every((t) => t >= since)) {
      if (performance.now() > deadline) {
        const waiting = this.#lastAckedSend.filter((t) => t < since).length;
        throw new Error(`${waiting} loops had no ack ${timeoutMs} ms after the event`);
      }
      await sleep(10);
    }
  }

  /** Stops posting and waits for the posts in flight. Idempotent. */
  async stop(): Promise<void> {
    this.#stopping = true;
    if (this.#probeTimer !== null) clearInterval(this.#probeTimer);
    this.#probeTimer = null;
    await this.#loops;
    await Promise.all([...this.#probes]);
  }

  async #loop(index: number, target: PostTarget): Promise<void> {
    while (!this.#stopping) {
      const sentAt = performance.now();
      try {
        const ack = await this.#post(target, {});
        this.#record({ loop: index, channelId: target.channelId, sentAt }, ack);
        this.#lastAckedSend[index] = sentAt;
      } catch (error) {
        this.failed.push({ loop: index, sentAt, error });
      }
      if (this.options.paceMs > 0) await sleep(this.options.paceMs);
    }
  }

  #sendProbes(): void {
    for (const target of this.options.probes) this.#sendProbe(target);
  }

  #sendProbe(target: PostTarget): void {
    const sentAt = performance.now();
    const probe = this.#post(target, { timeout: this.options.probeTimeoutMs, retryForMs: 0 }).then(
      (ack) => this.#record({ loop: -1, channelId: target.channelId, sentAt }, ack),
      () => undefined, // a probe that found no hub serving is what it is there to see
    );
    this.#probes.add(probe);
    // Removed when settled; `stop` awaits those still in flight.
    void probe.then(() => this.#probes.delete(probe));
  }

  #post(target: PostTarget, attempts: { readonly timeout?: number; readonly retryForMs?: number }) {
    return this.options.rpc.call(
      'post',
      {
        channel_id: target.channelId,
        sender_id: target.senderId,
        event_type: EV_TEXT,
        event_data: { text: BENCH_TEXT },
      },
      { caller: target.senderId, ...attempts },
    );
  }

  #record(
    sent: Pick<AckedPost, 'loop' | 'channelId' | 'sentAt'>,
    ack: { readonly envelope_id: string; readonly sequence: number },
  ): void {
    this.acked.push({ ...sent, ackedAt: performance.now(), envelopeId: ack.envelope_id, sequence: ack.sequence });
  }
}
