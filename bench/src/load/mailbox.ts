import type { ConsumerMessages, JetStreamClient } from '@nats-io/jetstream';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';

/** The fields of a delivered envelope the bench looks at; the rest passes through unparsed. */
const DeliverySchema = z.looseObject({
  envelope_id: z.string(),
  channel_id: z.string(),
  event_type: z.string(),
});
export type Delivery = z.infer<typeof DeliverySchema>;

/** Options of `Mailbox.open`. */
export interface MailboxOptions {
  readonly js: JetStreamClient;
  readonly stream: string;
  /** The agent's durable inbox consumer. */
  readonly consumer: string;
  /** Called for every delivery, without being awaited (e.g. to ack an invite); its failures go to `problems`. */
  readonly onDelivery?: (delivery: Delivery) => Promise<void> | void;
  /** Keep each delivery's arrival time for `arrival()`; default false. */
  readonly trackArrivals?: boolean;
}

/**
 * Drains one agent's durable inbox consumer, acking each message as it arrives, as an agent would. With
 * `trackArrivals`, `arrival(id)` resolves with the `performance.now()` at which the envelope arrived, also when it
 * arrived before anyone asked (a delivery can beat the post's own ack).
 */
export class Mailbox {
  readonly problems: string[] = [];
  #received = 0;
  readonly #arrived = new Map<string, number>();
  readonly #waiting = new Map<string, (at: number) => void>();
  readonly #inFlight = new Set<Promise<void>>();
  #loop: Promise<void> = Promise.resolve();

  private constructor(
    private readonly options: MailboxOptions,
    private readonly messages: ConsumerMessages,
  ) {}

  static async open(options: MailboxOptions): Promise<Mailbox> {
    const consumer = await options.js.consumers.get(options.stream, options.consumer);
    const mailbox = new Mailbox(options, await consumer.consume({ max_messages: 256 }));
    mailbox.#loop = mailbox.#drain();
    return mailbox;
  }

  get received(): number {
    return this.#received;
  }

  /** When the envelope arrived (`performance.now()`); waits for it if it has not yet. */
  arrival(envelopeId: string): Promise<number> {
    const at = this.#arrived.get(envelopeId);
    if (at !== undefined) {
      this.#arrived.delete(envelopeId);
      return Promise.resolve(at);
    }
    return new Promise((resolve) => this.#waiting.set(envelopeId, resolve));
  }

  async #drain(): Promise<void> {
    try {
      for await (const m of this.messages) {
        const at = performance.now();
        m.ack();
        this.#received += 1;
        const parsed = DeliverySchema.safeParse(parseJson(m.string()));
        if (!parsed.success) {
          this.problems.push(`delivery ${m.seq} is not an envelope: ${parsed.error.message}`);
          continue;
        }
        this.#record(parsed.data.envelope_id, at);
        this.#react(parsed.data);
      }
    } catch (err) {
      this.problems.push(`inbox consumer ${this.options.consumer} failed: ${String(err)}`);
    }
  }

  #record(envelopeId: string, at: number): void {
    const waiter = this.#waiting.get(envelopeId);
    if (waiter !== undefined) {
      this.#waiting.delete(envelopeId);
      waiter(at);
    } else if (this.options.trackArrivals === true) {
      this.#arrived.set(envelopeId, at);
    }
  }

  #react(delivery: Delivery): void {
    const onDelivery = this.options.onDelivery;
    if (onDelivery === undefined) return;
    const done = (async () => {
      try {
        await onDelivery(delivery);
      } catch (err) {
        this.problems.push(`handling ${delivery.event_type} ${delivery.envelope_id} failed: ${String(err)}`);
      }
    })();
    this.#inFlight.add(done);
    void done.then(() => this.#inFlight.delete(done));
  }

  /** Stops consuming; waits for the loop and for `onDelivery` calls still running. */
  async close(): Promise<void> {
    await this.messages.close();
    await this.#loop;
    await Promise.all([...this.#inFlight]);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
