/**
 * Permissions violations as NATS reports them on one connection: what a test of a secured server asserts on when
 * the server refuses a publish or a subscription before the hub sees it.
 */
import { PermissionViolationError, type NatsConnection } from '@nats-io/transport-node';
import { waitFor } from './wait.js';

/** A permissions violation as NATS reported it. */
export interface Violation {
  readonly operation: 'publish' | 'subscription';
  readonly subject: string;
}

/** Every permissions violation NATS reports on one connection, from the moment it is created. */
export class ViolationRecorder {
  readonly seen: Violation[] = [];

  constructor(private readonly nc: NatsConnection) {
    void this.#record();
  }

  async #record(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === 'error' && s.error instanceof PermissionViolationError) {
        this.seen.push({ operation: s.error.operation, subject: s.error.subject });
      }
    }
  }

  /**
   * Runs `attack` (its own outcome is ignored: a refused request may also time out), flushes the connection, and
   * resolves with the violation NATS reported for `subject`; rejects when none came. The server answers a refused
   * PUB or SUB with `-ERR` before the flush's PONG, so a missing violation means the server let the attack through.
   */
  async refused(subject: string, attack: () => unknown): Promise<Violation> {
    const before = this.seen.length;
    void Promise.resolve()
      .then(attack)
      .catch(() => undefined);
    await this.nc.flush();
    return waitFor(() => this.seen.slice(before).find((v) => v.subject === subject), {
      timeoutMs: 2_000,
      what: `a permissions violation on ${subject}`,
    });
  }
}
