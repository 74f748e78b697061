import type { NatsConnection, Subscription } from '@nats-io/transport-node';

/** A core NATS responder that answers each request with its own payload: the floor of an RPC round trip. */
export function startEcho(nc: NatsConnection, subject: string): Subscription {
  return nc.subscribe(subject, { callback: (_err, msg) => void msg.respond(msg.data) });
}
