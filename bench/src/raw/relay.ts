import { jetstream, jetstreamManager, type ConsumerMessages, type JetStreamClient } from '@nats-io/jetstream';
import { headers, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { createRawInboxes, createRawWal, createRelayConsumer, rawNames, type RawNames } from './streams.js';

/** Request headers of the relay: the message id and the comma-separated recipients. */
export const RelayHeader = { Id: 'Bench-Id', To: 'Bench-To' } as const;

/**
 * The hub's hops with none of its logic, as the physical floor for post→ack, post→delivery and fan-out: a request
 * on `rawreq.<channel>` is appended to `rawwal.<channel>` with a message id and the expected last subject sequence
 * (serialized per channel, as the hub does), then answered; a durable consumer over the raw WAL publishes each
 * message to every recipient's inbox subject (all at once, then ack), as the hub's deliverer does. No JSON is parsed.
 */
export class RawRelay {
  readonly #last = new Map<string, number>();
  readonly #tails = new Map<string, Promise<unknown>>();
  #sub: Subscription | null = null;
  #messages: ConsumerMessages | null = null;
  #loop: Promise<void> | null = null;
  #warned = false;
  readonly #js: JetStreamClient;

  private constructor(
    nc: NatsConnection,
    private readonly names: RawNames,
  ) {
    this.#js = jetstream(nc);
  }

  static async start(nc: NatsConnection, prefix: string): Promise<RawRelay> {
    const names = rawNames(prefix);
    const jsm = await jetstreamManager(nc);
    await createRawWal(jsm, names);
    await createRawInboxes(jsm, names);
    await createRelayConsumer(jsm, names);
    const relay = new RawRelay(nc, names);
    const consumer = await jetstream(nc).consumers.get(names.walStream, names.relayConsumer);
    relay.#messages = await consumer.consume({ max_messages: 512 });
    relay.#loop = relay.#fanOut(relay.#messages);
    relay.#sub = nc.subscribe(names.requestAll, { callback: (_err, msg) => relay.#onRequest(msg) });
    return relay;
  }

  #onRequest(msg: Msg): void {
    const channel = msg.subject.slice(msg.subject.lastIndexOf('.') + 1);
    const previous = this.#tails.get(channel) ?? Promise.resolve();
    const next = previous.then(() => this.#append(channel, msg));
    this.#tails.set(channel, next);
  }

  async #append(channel: string, msg: Msg): Promise<void> {
    const id = msg.headers?.get(RelayHeader.Id) ?? '';
    const h = headers();
    h.set(RelayHeader.To, msg.headers?.get(RelayHeader.To) ?? '');
    h.set(RelayHeader.Id, id);
    try {
      const ack = await this.#js.publish(this.names.wal(channel), msg.data, {
        msgID: id,
        expect: { lastSubjectSequence: this.#last.get(channel) ?? 0 },
        headers: h,
      });
      this.#last.set(channel, ack.seq);
      msg.respond(`{"ok":true,"result":{"sequence":${ack.seq}}}`);
    } catch (err) {
      msg.respond(JSON.stringify({ ok: false, error: { code: 'internal', message: String(err) } }));
    }
  }

  async #fanOut(messages: ConsumerMessages): Promise<void> {
    for await (const m of messages) {
      const id = m.headers?.get(RelayHeader.Id) ?? '';
      const to = (m.headers?.get(RelayHeader.To) ?? '').split(',').filter((r) => r !== '');
      try {
        await Promise.all(to.map((r) => this.#js.publish(this.names.inbox(r), m.data, { msgID: `${id}.${r}` })));
        m.ack();
      } catch (err) {
        // Retried after 1 s; said once, so that a baseline stuck on a refusal (a cap, a missing stream) is visible.
        if (!this.#warned) process.stderr.write(`raw relay: fan-out failed, retrying: ${String(err)}\n`);
        this.#warned = true;
        m.nak(1000);
      }
    }
  }

  async stop(): Promise<void> {
    await this.#sub?.drain();
    this.#messages?.stop();
    await this.#loop;
  }
}
