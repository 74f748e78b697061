import { RpcReplySchema } from '@ag2net/protocol';
import type { NatsConnection } from '@nats-io/transport-node';

/**
 * An RPC of the hub over a raw connection, as an attacker would make it: its result, or a thrown `<code>: <message>`
 * of the hub's error reply.
 */
export async function rawCall(nc: NatsConnection, subject: string, body: unknown, timeoutMs = 5_000): Promise<unknown> {
  const msg = await nc.request(subject, JSON.stringify(body), { timeout: timeoutMs });
  const reply = RpcReplySchema.parse(JSON.parse(msg.string()));
  if (!reply.ok) throw new Error(`${reply.error.code}: ${reply.error.message}`);
  return reply.result;
}
