import { ChannelState, type Envelope } from '@ag2net/protocol';
import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { setTimeout as sleep } from 'node:timers/promises';
import { deadLetter } from '../audit/dead-letters.js';
import { AuditKind } from '../audit/kinds.js';
import { auditFromWal } from '../audit/wal-records.js';
import { parseStored } from '../nats/wal.js';
import type { HubContext } from './context.js';
import { allowedRecipients } from './fan-out.js';
import { onBadGlob } from './glob.js';
import { finishCloseLocked } from './lifecycle.js';

/** How many WAL messages are fanned out at once (different channels in parallel, one channel in order). */
const WINDOW = 256;
/** Attempts of one fan-out before it is dead-lettered. */
export const DELIVERY_ATTEMPTS = 5;
/** Pause after the first failed attempt, in ms; it doubles after each further one (100, 200, 400, 800). */
const FIRST_BACKOFF_MS = 100;

/** One WAL message on its way through the window. */
interface InFlight {
  readonly msg: JsMsg;
  /** `done` once fanned out, dead-lettered or quarantined (and acked); `stopped` when the hub stopped first. */
  outcome: 'pending' | 'done' | 'stopped';
  envelope: Envelope | null;
}

/**
 * Fans every admitted envelope out to its audience's durable inboxes, from a durable consumer over the WAL, and
 * writes the audit records the WAL implies (channel created, closed, expired; expectation violated). After a crash,
 * whatever was admitted but not yet acked is redelivered, and the inbox messages' ids (`<envelope_id>.<agent_id>`)
 * and the audit records' ids make the repeat harmless.
 *
 * Poison cannot stall it: a fan-out is tried `DELIVERY_ATTEMPTS` times with backoff and then parked as a dead letter
 * (`deadLetter`); a WAL message that is no envelope is quarantined; a throwing arbiter denies one recipient. Each
 * message is acked as soon as it is done, so a slow channel holds only its own place in the window, never the others.
 */
export class Deliverer {
  #messages: ConsumerMessages | null = null;
  #loop: Promise<void> | null = null;
  #stopping = false;
  #abort = new AbortController();
  /** Messages in stream order from the oldest one not yet done (the contiguous floor) on. */
  readonly #window: InFlight[] = [];
  /** Messages in the window still being fanned out. */
  #pending = 0;
  readonly #chains = new Map<string, Promise<void>>();
  #roomWaiters: (() => void)[] = [];
  #unsubscribeGlobs: () => void = () => undefined;

  constructor(private readonly ctx: HubContext) {}

  async start(): Promise<void> {
    this.#stopping = false;
    // While this hub decides, a malformed pattern stored before rules were validated is logged once.
    this.#unsubscribeGlobs();
    this.#unsubscribeGlobs = onBadGlob((pattern, problem) =>
      this.ctx.logger.warn({ pattern, problem }, 'a stored rule holds a malformed glob; it matches nothing'),
    );
    this.#abort = new AbortController();
    const consumer = await this.ctx.js.consumers.get(this.ctx.names.walStream, this.ctx.names.deliveryConsumer);
    this.#messages = await consumer.consume({ max_messages: 512 });
    this.#loop = this.#run(this.#messages);
  }

  /** Settles when the consume loop of the current `start` ends (also after `stop`); never before `start`. */
  closed(): Promise<void> {
    return this.#loop ?? new Promise(() => undefined);
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#unsubscribeGlobs();
    this.#abort.abort();
    for (const resolve of this.#roomWaiters.splice(0)) resolve();
    this.#messages?.stop();
    await this.#loop;
    this.#messages = null;
    this.#loop = null;
  }

  /**
   * Fans messages out concurrently across channels and in order within a channel (so every inbox sees a channel's
   * envelopes in log order). `deliveredThrough` follows the contiguous floor: every message at or below it is done.
   */
  async #run(messages: ConsumerMessages): Promise<void> {
    for await (const msg of messages) {
      while (this.#pending >= WINDOW && !this.#stopping) {
        await new Promise<void>((resolve) => this.#roomWaiters.push(resolve));
      }
      const item: InFlight = { msg, outcome: 'pending', envelope: null };
      this.#window.push(item);
      this.#pending += 1;
      this.#schedule(item);
    }
    await Promise.all([...this.#chains.values()]);
    this.#window.length = 0;
    this.#pending = 0;
    for (const resolve of this.#roomWaiters.splice(0)) resolve();
  }

  #schedule(item: InFlight): void {
    let envelope: Envelope;
    try {
      envelope = parseStored(item.msg.string());
    } catch (err) {
      void this.#quarantine(item, err);
      return;
    }
    item.envelope = envelope;
    const channelId = envelope.channel_id;
    const chain = (this.#chains.get(channelId) ?? Promise.resolve()).then(async () => {
      this.#finish(item, (await this.#deliver(envelope, item.msg)) ? 'done' : 'stopped');
    });
    this.#chains.set(channelId, chain);
    void chain.then(() => {
      if (this.#chains.get(channelId) === chain) this.#chains.delete(channelId);
    });
  }

  /**
   * A WAL message that is no envelope is not the hub's: counted in `quarantined`, logged, audited (under the id
   * hydrate uses for the same message, so one record stands for both) and acked.
   */
  async #quarantine(item: InFlight, err: unknown): Promise<void> {
    const { msg } = item;
    const reason = (err instanceof Error ? err.message : String(err)).slice(0, 500);
    this.ctx.counters.quarantined += 1;
    this.ctx.logger.error({ streamSeq: msg.seq, subject: msg.subject, reason }, 'WAL message is not an envelope');
    const key = msg.subject.replace(/[^A-Za-z0-9_-]/g, '_');
    await this.ctx.audit.recordAfter(
      AuditKind.Quarantined,
      { source: 'wal', key: msg.subject, seq: msg.seq, reason },
      { id: `quarantine-wal-${msg.seq}-${key}`.slice(0, 128) },
    );
    this.#finish(item, 'done');
  }

  /**
   * Fans one envelope out and writes its audit records, retrying only what failed (inboxes that did not take it,
   * the audit records) with backoff; after `DELIVERY_ATTEMPTS` it is dead-lettered. True when done, false when the
   * hub stopped first (the message stays unacked and is redelivered to the next active hub).
   */
  async #deliver(envelope: Envelope, msg: JsMsg): Promise<boolean> {
    let todo = await allowedRecipients(this.ctx, envelope);
    let audited = false;
    let reason = '';
    for (let attempt = 0; attempt < DELIVERY_ATTEMPTS; attempt += 1) {
      if (this.#stopping) return false;
      if (attempt > 0) {
        // Keep the server from redelivering a message that is still being worked on.
        msg.working();
        try {
          await sleep(FIRST_BACKOFF_MS * 2 ** (attempt - 1), undefined, { signal: this.#abort.signal });
        } catch {
          return false;
        }
      }
      const failed = await this.#publish(envelope, msg, todo);
      todo = failed.map((f) => f.recipient);
      reason = failed[0]?.reason ?? '';
      if (!audited) {
        try {
          await auditFromWal(this.ctx, envelope);
          audited = true;
        } catch (err) {
          reason ||= `audit: ${err instanceof Error ? err.message : String(err)}`;
        }
      }
      if (todo.length === 0 && audited) return true;
      this.ctx.logger.warn({ streamSeq: msg.seq, attempt, recipients: todo, reason }, 'delivery failed; retrying');
    }
    if (this.#stopping) return false;
    await deadLetter(this.ctx, { envelope, streamSeq: msg.seq, recipients: todo, reason });
    return true;
  }

  /** Publishes to each recipient's inbox; returns those whose inbox did not take it, with why. */
  async #publish(
    envelope: Envelope,
    msg: JsMsg,
    recipients: readonly string[],
  ): Promise<{ recipient: string; reason: string }[]> {
    const results = await Promise.allSettled(
      recipients.map((rid) =>
        this.ctx.js.publish(this.ctx.names.inbox(rid), msg.data, { msgID: `${envelope.envelope_id}.${rid}` }),
      ),
    );
    const failed: { recipient: string; reason: string }[] = [];
    results.forEach((result, i) => {
      const recipient = recipients[i];
      if (result.status === 'rejected' && recipient !== undefined) {
        const err: unknown = result.reason;
        failed.push({ recipient, reason: err instanceof Error ? err.message : String(err) });
      }
    });
    return failed;
  }

  /** Acks a finished message at once, then moves the contiguous floor past every done message at the head. */
  #finish(item: InFlight, outcome: 'done' | 'stopped'): void {
    item.outcome = outcome;
    this.#pending -= 1;
    if (outcome === 'done') {
      item.msg.ack();
      if (item.envelope !== null) this.#maybeFinishClose(item.envelope);
    }
    while (this.#window[0]?.outcome === 'done') {
      const head = this.#window.shift();
      if (head === undefined) break;
      if (head.msg.seq > this.ctx.deliveredThrough) this.ctx.deliveredThrough = head.msg.seq;
      // A channel that began closing while this message waited behind another channel's can end now.
      if (head.envelope !== null) this.#maybeFinishClose(head.envelope);
    }
    if (this.#pending < WINDOW || this.#stopping) for (const resolve of this.#roomWaiters.splice(0)) resolve();
  }

  /** A closing channel whose admitted envelopes are all delivered ends now. */
  #maybeFinishClose(envelope: Envelope): void {
    const rt = this.ctx.channels.get(envelope.channel_id);
    if (rt === undefined || rt.metadata.state !== ChannelState.Closing || rt.closingAt === null) return;
    if ((envelope.sequence ?? 0) < rt.closingAt) return;
    void this.ctx.serial
      .run(envelope.channel_id, () => finishCloseLocked(this.ctx, rt))
      .catch((err: unknown) =>
        this.ctx.logger.error({ err, channelId: envelope.channel_id }, 'closing a channel failed'),
      );
  }
}
