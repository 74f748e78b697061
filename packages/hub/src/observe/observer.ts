import type { ChannelState, Envelope, HubOp } from '@ag2net/protocol';
import type { Logger } from '../base/logger.js';

/** One RPC request the hub answered. */
export interface RequestOutcome {
  readonly op: HubOp;
  /** `null` when it succeeded; else the wire error code it was refused with (`access_denied`, `internal`, …). */
  readonly code: string | null;
  /** From the parsed request to the handler's result or error, in ms. */
  readonly durationMs: number;
}

/**
 * One request the hub dropped unanswered before parsing it: its reply subject could not be attributed to the caller
 * (none, not an inbox, or an imported request from another account or without a server-minted reply).
 */
export interface DroppedRequest {
  /** The operation, or `hubsPing` for the roster. */
  readonly op: HubOp | 'hubsPing';
  readonly reason: string;
}

/** One admitted envelope fanned out to its audience's inboxes (or parked as a dead letter). */
export interface DeliveryOutcome {
  readonly envelope: Envelope;
  /** From the envelope's admission (`created_at`) to the end of its fan-out, in ms. */
  readonly lagMs: number;
}

/** How many channels of one type are in one state. */
export interface ChannelCount {
  readonly type: string;
  readonly state: ChannelState;
  readonly count: number;
}

/** What an observer may read from the hub at any time (at a metrics scrape). Cheap: no I/O. */
export interface HubView {
  /** The channels this hub holds, counted by manifest type and state (empty on a standby that never served). */
  channelCounts(): readonly ChannelCount[];
}

/**
 * Told what the hub does, for metrics. Every method is optional, runs synchronously on the hub's path and must be
 * cheap; a method that throws is logged and otherwise ignored. `HubOptions.observer`; default none.
 */
export interface HubObserver {
  /** Called once, when the hub starts, with a view to read gauges from. */
  readonly bind?: (view: HubView) => void;
  /** After every RPC request handled, before the reply is sent. */
  readonly requestFinished?: (outcome: RequestOutcome) => void;
  /** After every request dropped unanswered (`DroppedRequest`). */
  readonly requestDropped?: (dropped: DroppedRequest) => void;
  /** After each admitted envelope's fan-out is done (also after a redelivery). */
  readonly delivered?: (outcome: DeliveryOutcome) => void;
}

/** An observer that observes nothing. */
export const noObserver: HubObserver = {};

/** Calls `fn`, logging instead of throwing: an observer never breaks the hub. */
export function notify(logger: Logger, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    logger.warn({ err }, 'hub observer failed');
  }
}
