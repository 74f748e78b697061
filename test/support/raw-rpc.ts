import { EnvelopeSchema, RpcReplySchema, type Envelope, type HubNames } from '@ag2net/protocol';
import { jetstream } from '@nats-io/jetstream';
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

/** The next envelope in an identity's inbox, read and acked over its own connection as a client would. */
export async function takeInboxEnvelope(nc: NatsConnection, names: HubNames, agentId: string): Promise<Envelope> {
  const inbox = await jetstream(nc).consumers.get(names.inboxStream, names.inboxConsumer(agentId));
  const msg = await inbox.next({ expires: 5_000 });
  if (msg === null) throw new Error(`nothing reached the inbox of ${agentId}`);
  const envelope = EnvelopeSchema.parse(JSON.parse(msg.string()));
  await msg.ackAck();
  return envelope;
}
