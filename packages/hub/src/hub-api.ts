import type { Health, HubNames } from '@ag2net/protocol';
import type { HubSnapshot } from './operations/hub-snapshot.js';

/** A running hub instance: the active writer, or a standby waiting for the lease. */
export interface Hub {
  readonly hubId: string;
  readonly names: HubNames;
  /** `active` while this instance holds the lease and serves; `standby` otherwise. */
  readonly role: 'active' | 'standby';
  /** The fencing epoch of the current lease (0 on a standby). */
  readonly epoch: number;
  /** Resolves when this instance becomes active. */
  whenActive(): Promise<void>;
  /** Runs the sweepers once now: handshake timeouts, channel and task TTLs, expectations. No-op on a standby. */
  tick(): Promise<void>;
  /** The hub's whole state as plain data. */
  snapshot(): HubSnapshot;
  health(): Health;
  /** Graceful stop: stop admitting, finish what was admitted, stop delivering, release the lease. Idempotent. */
  close(): Promise<void>;
  /**
   * Settles when the hub has stopped for good: `undefined` after `close()`, an `Error` when it stopped on its own
   * (its NATS connection closed). A lost lease or a failed term is not an end: the hub campaigns again.
   */
  closed(): Promise<void | Error>;
  [Symbol.asyncDispose](): Promise<void>;
}
