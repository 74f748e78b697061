import type { HubNames } from '@ag2net/protocol';
import { errors, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { ObservedHolder } from './lease.js';
import type { Logger } from '../base/logger.js';

/**
 * How long a presence probe waits, ms. A connected hub never answers, so a probe of a live hub takes this long; the
 * server's "no responders" comes back within a round trip, and one slower than this counts as connected (the safe
 * side).
 */
export const PRESENCE_PROBE_TIMEOUT_MS = 150;

/**
 * How long a holder must be seen gone, by every probe and with this hub's own connection up throughout, before a
 * standby takes the lease over, ms. Longer than a live hub's reconnect after a server restart or a cluster node's
 * death (its reconnect wait, 250 ms, plus nats.js's jitter), so that a hub that only lost its connection for a moment
 * is not deposed; short enough that a dead hub's partitions serve again within 2 s.
 */
export const GONE_CONFIRM_MS = 1_000;

/** What one probe of a hub's presence found. */
export type Presence = 'connected' | 'gone' | 'unknown';

/**
 * A hub's presence on NATS (`names.hubAlive`): a subscription the hub holds from the start of its election to its
 * close, and answers never. The server delivers a request there while the hub's connection is open, so the request
 * times out; once the connection is gone (the process died, or the server closed it) the server has no interest and
 * answers "no responders" at once. That is how a standby sees the active hub's death before its lease expires.
 *
 * Nothing is ever published in answer, so a request whose reply subject points anywhere makes the hub write nothing.
 * A paused hub (SIGSTOP, a long GC) keeps its connection and so its presence: a pause is decided by the lease alone.
 */
export class HubPresence {
  #sub: Subscription | null = null;

  constructor(
    private readonly nc: NatsConnection,
    private readonly names: HubNames,
    private readonly options: { readonly hubId: string; readonly logger: Logger },
  ) {}

  /** Holds this hub's presence subscription until `stop()`. Idempotent. */
  start(): void {
    if (this.#sub !== null) return;
    // No callback work: the message is dropped unanswered (the subscription only has to exist).
    const sub = this.nc.subscribe(this.names.hubAlive(this.options.hubId), { callback: () => undefined });
    this.#sub = sub;
    void sub.closed.then((err) => {
      if (err instanceof Error) this.options.logger.error({ err }, 'hub presence subscription ended');
    });
  }

  /** Drops the presence subscription. */
  async stop(): Promise<void> {
    const sub = this.#sub;
    this.#sub = null;
    if (sub !== null && !sub.isClosed()) await sub.drain().catch(() => undefined);
  }

  /**
   * Asks whether `hubId` is connected: `gone` only when the server said nobody holds its presence subscription,
   * `connected` when the request reached a subscriber (it timed out), `unknown` for anything else (this hub's own
   * connection is down, a permission error).
   */
  async probe(hubId: string): Promise<Presence> {
    try {
      await this.nc.request(this.names.hubAlive(hubId), undefined, { timeout: PRESENCE_PROBE_TIMEOUT_MS });
      return 'connected'; // nothing answers presence requests; an answer still says someone holds the subject
    } catch (err) {
      if (err instanceof errors.NoRespondersError) return 'gone';
      if (err instanceof errors.RequestError && err.isNoResponders()) return 'gone';
      if (err instanceof errors.TimeoutError) return 'connected';
      return 'unknown';
    }
  }
}

/**
 * A standby's judgement that the lease holder is dead: its presence probed at every campaign step, and `gone` only
 * after every probe for `GONE_CONFIRM_MS` found it gone, for the same record of the holder (a renewal restarts the
 * wait), while this hub's own connection stayed up (a probe sent just after this hub reconnected may race the holder's
 * own reconnect, so a reconnect restarts the wait too).
 */
export class GoneWatch {
  #gone: (ObservedHolder & { readonly since: number }) | null = null;
  #connectedSince: number | null;

  constructor(
    private readonly presence: Pick<HubPresence, 'probe'>,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.#connectedSince = now();
  }

  /** This hub's connection went down. */
  disconnected(): void {
    this.#connectedSince = null;
    this.#gone = null;
  }

  /** This hub's connection is back. */
  reconnected(): void {
    this.#connectedSince = this.now();
    this.#gone = null;
  }

  /**
   * Probes `holder` (the record a standby's lease attempt found; `null`: none) and says whether it has now been gone
   * for `GONE_CONFIRM_MS`. Any probe that does not find it gone, another record, or a reconnect starts over.
   */
  async confirmedGone(holder: ObservedHolder | null): Promise<boolean> {
    const connectedSince = this.#connectedSince;
    if (holder === null || connectedSince === null) {
      this.#gone = null;
      return false;
    }
    const sentAt = this.now();
    const presence = await this.presence.probe(holder.hubId);
    if (presence !== 'gone' || this.#connectedSince !== connectedSince) {
      this.#gone = null;
      return false;
    }
    const gone = this.#gone;
    if (gone === null || gone.hubId !== holder.hubId || gone.revision !== holder.revision) {
      this.#gone = { ...holder, since: sentAt };
      return false;
    }
    return sentAt - gone.since >= GONE_CONFIRM_MS;
  }
}
