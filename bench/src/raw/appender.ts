import { WalHeader } from '@ag2net/protocol/internal';
import { RpcReplySchema, newId } from '@ag2net/protocol';
import type { JetStreamClient } from '@nats-io/jetstream';
import { headers, type NatsConnection } from '@nats-io/transport-node';
import { POST_TIMEOUT_MS, type TextTemplate } from '../load/poster.js';
import { RelayHeader } from './relay.js';
import type { RawNames } from './streams.js';

/**
 * The hub's append, done directly: one subject per channel, each append after the previous one's ack, with a msg
 * id, the expected last subject sequence, the hub's two headers and the bytes the hub stores.
 */
export class RawAppender {
  readonly #last = new Map<string, number>();
  readonly #count = new Map<string, number>();

  constructor(
    private readonly js: JetStreamClient,
    private readonly names: RawNames,
    private readonly payload: string,
  ) {}

  async append(channel: string): Promise<void> {
    const sequence = (this.#count.get(channel) ?? 0) + 1;
    const h = headers();
    h.set(WalHeader.Epoch, '1');
    h.set(WalHeader.Sequence, String(sequence));
    const ack = await this.js.publish(this.names.wal(channel), this.payload, {
      msgID: newId(),
      expect: { lastSubjectSequence: this.#last.get(channel) ?? 0 },
      headers: h,
      timeout: 5000,
      retries: 3,
    });
    this.#last.set(channel, ack.seq);
    this.#count.set(channel, sequence);
  }
}

/**
 * One post through the raw relay (see `RawRelay`): the body a client sends the hub, one recipient (as in a
 * conversation), the reply parsed and checked.
 */
export async function relayPost(
  nc: NatsConnection,
  names: RawNames,
  channel: string,
  template: TextTemplate,
  recipients = 'peer',
): Promise<void> {
  const { id, body } = template.withId();
  const h = headers();
  h.set(RelayHeader.Id, id);
  h.set(RelayHeader.To, recipients);
  const msg = await nc.request(names.request(channel), body, { timeout: POST_TIMEOUT_MS, headers: h });
  const reply = RpcReplySchema.safeParse(JSON.parse(msg.string()));
  if (!reply.success || !reply.data.ok) throw new Error(`relay refused: ${msg.string().slice(0, 200)}`);
}
