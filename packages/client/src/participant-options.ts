import type { Envelope } from '@ag2net/protocol';
import type { CallOptions } from './rpc.js';
import type { ReceiveOptions } from './subscriptions.js';

/** Options of `open`. */
export interface OpenOptions extends CallOptions {
  /** The channel type: `consulting`, `conversation`, `discussion`, `workflow` or a custom one. */
  readonly type: string;
  /** Who to invite, by name or agent id. */
  readonly target: string | readonly string[];
  readonly knobs?: Record<string, unknown>;
  /** Time to live: seconds or `"30m"`; default the creator's rule (2h). */
  readonly ttl?: string | number;
  readonly intent?: string;
  readonly labels?: Record<string, string>;
}

/** Options of `nextEnvelope` and `waitForChannelEvent`. */
export interface NextOptions extends ReceiveOptions {
  /** Which envelope to wait for; default the next one. Others are left to other subscriptions. */
  readonly predicate?: (envelope: Envelope) => boolean;
}
