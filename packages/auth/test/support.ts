/**
 * Test kit of the auth integration tests: RPC over a raw connection, so that nothing but the connection's own
 * permissions decides what reaches the hub (the recorder of the violations NATS reports is in @ag2net/test-support).
 */
import { RpcReplySchema } from '@ag2net/protocol';
import type { NatsConnection } from '@nats-io/transport-node';

/** An RPC over a raw connection; resolves with the reply's result, rejects with the wire error's code. */
export async function call(nc: NatsConnection, subject: string, body: unknown): Promise<unknown> {
  const msg = await nc.request(subject, JSON.stringify(body), { timeout: 5_000 });
  const reply = RpcReplySchema.parse(JSON.parse(msg.string()));
  if (!reply.ok) throw new Error(`${reply.error.code}: ${reply.error.message}`);
  return reply.result;
}
