/**
 * Test kit of the auth integration tests: RPC over a raw connection (so that nothing but the connection's own
 * permissions decides what reaches the hub) and a recorder of the permissions violations NATS reports on it.
 */
import { RpcReplySchema } from '@ag2net/protocol';
import { waitFor } from '@ag2net/test-support';
import { PermissionViolationError, type NatsConnection } from '@nats-io/transport-node';

/** A permissions violation as NATS reported it. */
export interface Violation {
  readonly operation: 'publish' | 'subscription';
  readonly subject: string;
}

/** Every permissions violation NATS reports on one connection, from now on. */
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
   * resolves with the violation NATS reported for `subject`; rejects when NATS let it through. The server answers a
   * refused PUB or SUB with `-ERR` before it answers the flush's PING, so a missing violation is a real pass-through.
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

/** An RPC over a raw connection; resolves with the reply's result, rejects with the wire error's code. */
export async function call(nc: NatsConnection, subject: string, body: unknown): Promise<unknown> {
  const msg = await nc.request(subject, JSON.stringify(body), { timeout: 5_000 });
  const reply = RpcReplySchema.parse(JSON.parse(msg.string()));
  if (!reply.ok) throw new Error(`${reply.error.code}: ${reply.error.message}`);
  return reply.result;
}
