import { DELIVERY_ORIGIN_HUB, DeliveryHeader } from '@ag2net/protocol/internal';
import { ChannelState, type Envelope } from '@ag2net/protocol';
import type { ConsumeOptions, Consumer, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { RequestError, TimeoutError, headers } from '@nats-io/transport-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { deadLetter, type DeadLetter } from '../audit/dead-letters.js';
import { auditFromWal } from '../audit/wal-records.js';
import { observedDelivery } from '../observe/delivery.js';
import { channelFields } from '../observe/log-names.js';
import { ConsumeWatchdog } from './consume-watchdog.js';
import type { HubContext } from './context.js';
import { allowedRecipients } from './fan-out.js';
import { finishCloseLocked } from './lifecycle.js';
import { auditQuarantined } from './quarantine.js';
import { checkForDelivery } from './wal-scan.js';

/** How many WAL messages are fanned out at once (different channels in parallel, one channel in order). */
const WINDOW = 256;
/** Attempts of one fan-out before it is dead-lettered. */
export const DELIVERY_ATTEMPTS = 5;
/** Pause after the first failed attempt, in ms; it doubles after each further one (100, 200, 400, 800). */
const FIRST_BACKOFF_MS = 100;
/**
 * Each pull lives 5 s with a heartbeat every 2.5 s, so nats.js notices a lost pull (the consumer's leader moved) after
 * 5 s and, when the consumer cannot be reached, retries it every 5 s; the 30 s default left the WAL undelivered for
 * 30 s to a minute after a leader change.
 */
const CONSUME_OPTIONS: ConsumeOptions = { max_messages: 512, expires: 5_000 };
/** Silence of a consume with messages pending after which it is replaced: past two missed heartbeats and a re-pull. */
const DEFAULT_WATCH = { stallMs: 12_000, checkMs: 1_000 };
/** Pause before a new consume after one ended, doubling per failed start up to the maximum, ms. */
const RESTART_FIRST_MS = 250;
const RESTART_MAX_MS = 5_000;
/** How long a fan-out that cannot reach JetStream is retried before its failures count as attempts, ms. */
const UNREACHABLE_BUDGET_MS = 60_000;
/** How often a fan-out waiting out a lapsed lease looks at it again, ms. */
const LAPSE_CHECK_MS = 50;
/** Longest pause between two tries of a fan-out that cannot reach JetStream, ms. */
const UNREACHABLE_BACKOFF_MAX_MS = 1_000;

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

  constructor(
    private readonly ctx: HubContext,
    /** When a silent consume counts as stalled; see `ConsumeWatchdog`. */
    private readonly watch: { readonly stallMs: number; readonly checkMs: number } = DEFAULT_WATCH,
  ) {}

  async start(): Promise<void> {
    this.#stopping = false;
    this.#abort = new AbortController();
    const consumer = await this.ctx.js.consumers.get(this.ctx.names.walStream, this.ctx.names.deliveryConsumer);
    const first = await consumer.consume(CONSUME_OPTIONS);
    this.#loop = this.#run(consumer, first);
  }

  /** Settles when the delivery loop of the current `start` ends (after `stop`); never before `start`. */
  closed(): Promise<void> {
    return this.#loop ?? new Promise(() => undefined);
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#abort.abort();
    for (const resolve of this.#roomWaiters.splice(0)) resolve();
    this.#messages?.stop();
    await this.#loop;
    this.#messages = null;
    this.#loop = null;
  }

  /**
   * Consumes until `stop`: a consume that ends on its own, or that the watchdog finds stalled (a consumer leader
   * moved and the client's pull went with it), is replaced by a new one on the same durable consumer, which resumes
   * after what was already delivered; what was delivered but not acked stays in the window and finishes normally.
   */
  async #run(consumer: Consumer, first: ConsumerMessages): Promise<void> {
    let messages: ConsumerMessages | null = first;
    for (let failures = 0; !this.#stopping;) {
      if (messages === null) {
        try {
          messages = await consumer.consume(CONSUME_OPTIONS);
          failures = 0;
        } catch (err) {
          failures += 1;
          this.ctx.logger.warn({ err, failures }, 'starting the delivery consume failed; retrying');
          if (!(await this.#pause(Math.min(RESTART_MAX_MS, RESTART_FIRST_MS * 2 ** failures)))) break;
          continue;
        }
      }
      this.#messages = messages;
      if (this.#stopping) {
        // `stop` came while this consume was being started: it stopped the one before.
        messages.stop();
        break;
      }
      await this.#consume(consumer, messages);
      messages = null;
      if (this.#stopping) break;
      this.ctx.logger.warn({}, 'the delivery consume ended; starting a new one');
      if (!(await this.#pause(RESTART_FIRST_MS))) break;
    }
    await Promise.all([...this.#chains.values()]);
    this.#window.length = 0;
    this.#pending = 0;
    for (const resolve of this.#roomWaiters.splice(0)) resolve();
  }

  /** Waits `ms` unless the deliverer stops first; true when it waited the whole time. */
  async #pause(ms: number): Promise<boolean> {
    try {
      await sleep(ms, undefined, { signal: this.#abort.signal });
      return !this.#stopping;
    } catch {
      return false;
    }
  }

  /**
   * Reads one consume until it ends: fans messages out concurrently across channels and in order within a channel
   * (so every inbox sees a channel's envelopes in log order). `deliveredThrough` follows the contiguous floor: every
   * message at or below it is done. A watchdog ends the consume when it stalls.
   */
  async #consume(consumer: Consumer, messages: ConsumerMessages): Promise<void> {
    let reading = true;
    const watchdog = new ConsumeWatchdog({
      ...this.watch,
      waiting: () => reading,
      pending: async () => (await consumer.info()).num_pending,
      onStall: (silentMs, pending) => {
        this.ctx.logger.warn(
          { silentMs: Math.round(silentMs), pending },
          'the delivery consume stalled; restarting it',
        );
        messages.stop();
      },
    });
    void this.#watchStatus(messages, watchdog);
    try {
      for await (const msg of messages) {
        watchdog.activity();
        reading = false;
        while (this.#pending >= WINDOW && !this.#stopping) {
          await new Promise<void>((resolve) => this.#roomWaiters.push(resolve));
        }
        reading = true;
        watchdog.activity();
        if (!this.#serving() && !(await this.#mayGoOn(msg))) {
          // Not taken into the window: handed back to the consumer at once, for the hub that serves next.
          msg.nak();
          continue;
        }
        const item: InFlight = { msg, outcome: 'pending', envelope: null };
        this.#window.push(item);
        this.#pending += 1;
        this.#schedule(item);
      }
    } catch (err) {
      if (!this.#stopping) this.ctx.logger.warn({ err }, 'the delivery consume failed');
    } finally {
      watchdog.stop();
    }
  }

  /** Feeds the consume's heartbeats to the watchdog and logs what tells of trouble (missed heartbeats, …). */
  async #watchStatus(messages: ConsumerMessages, watchdog: ConsumeWatchdog): Promise<void> {
    try {
      for await (const status of messages.status()) {
        if (status.type === 'heartbeat') watchdog.activity();
        else if (status.type === 'heartbeats_missed' || status.type === 'consumer_not_found') {
          this.ctx.logger.warn({ status: status.type }, 'delivery consume status');
        }
      }
    } catch {
      // The status stream ends with the consume.
    }
  }

  #schedule(item: InFlight): void {
    const checked = checkForDelivery(this.ctx.names, item.msg, (id) => this.ctx.channels.get(id));
    if (!checked.ok) {
      void this.#quarantine(item, checked.reason);
      return;
    }
    const envelope = checked.envelope;
    item.envelope = envelope;
    const channelId = envelope.channel_id;
    const chain = (this.#chains.get(channelId) ?? Promise.resolve()).then(async () => {
      const done = await observedDelivery(this.ctx, envelope, () => this.#deliver(envelope, item.msg));
      this.#finish(item, done ? 'done' : 'stopped');
    });
    this.#chains.set(channelId, chain);
    void chain.then(() => {
      if (this.#chains.get(channelId) === chain) this.#chains.delete(channelId);
    });
  }

  /**
   * A WAL message the hub did not admit (see `checkForDelivery`) is not delivered: logged, counted and audited (under
   * the id hydrate and the writer's catch-up use for the same message, so it counts once and one record stands for
   * all) and acked.
   */
  async #quarantine(item: InFlight, err: unknown): Promise<void> {
    const { msg } = item;
    const reason = (err instanceof Error ? err.message : String(err)).slice(0, 500);
    this.ctx.logger.error(
      { streamSeq: msg.seq, subject: msg.subject, reason },
      'WAL message the hub did not admit; not delivered',
    );
    await auditQuarantined(this.ctx, { source: 'wal', key: msg.subject, seq: msg.seq, reason });
    this.#finish(item, 'done');
  }

  /**
   * Fans one envelope out and writes its audit records, retrying only what failed (inboxes that did not take it,
   * the audit records) with backoff; after `DELIVERY_ATTEMPTS` refusals it is dead-lettered. A failure that only says
   * JetStream could not be reached (a timeout, no responders: a stream electing a leader after a node died) is no
   * refusal: it is retried, backing off to `UNREACHABLE_BACKOFF_MAX_MS`, for `UNREACHABLE_BUDGET_MS` before it counts,
   * so a leader election never turns deliverable envelopes into dead letters. True when done, false when the hub
   * stopped first (the message stays unacked and is redelivered to the next active hub).
   */
  async #deliver(envelope: Envelope, msg: JsMsg): Promise<boolean> {
    if (envelope.audience === null && this.ctx.channels.get(envelope.channel_id) === undefined) {
      // A broadcast's audience is its channel's participants: with no channel there is nobody to send it to, and
      // acking it would lose it without a trace. The hub holding the lease knows every channel it admitted to.
      if (!this.#serving() && !(await this.#mayGoOn(msg))) return false;
      return this.#park({ envelope, streamSeq: msg.seq, recipients: [], reason: 'channel not known to the hub' }, msg);
    }
    let todo = await allowedRecipients(this.ctx, envelope);
    let audited = false;
    let reason = '';
    let unreachableSince: number | null = null;
    for (let attempt = 0, tries = 0; attempt < DELIVERY_ATTEMPTS; tries += 1) {
      if (!this.#serving() && !(await this.#mayGoOn(msg))) return false;
      if (tries > 0) {
        // Keep the server from redelivering a message that is still being worked on.
        msg.working();
        const pauseMs =
          unreachableSince === null
            ? FIRST_BACKOFF_MS * 2 ** Math.max(0, attempt - 1)
            : Math.min(UNREACHABLE_BACKOFF_MAX_MS, FIRST_BACKOFF_MS * 2 ** Math.min(tries - 1, 10));
        if (!(await this.#pause(pauseMs))) return false;
      }
      const failed = await this.#publish(envelope, msg, todo);
      todo = failed.map((f) => f.recipient);
      reason = failed[0]?.reason ?? '';
      let unreachable = failed.length > 0 && failed.every((f) => f.unreachable);
      if (!audited) {
        try {
          await auditFromWal(this.ctx, envelope);
          audited = true;
        } catch (err) {
          reason ||= `audit: ${err instanceof Error ? err.message : String(err)}`;
          unreachable = (failed.length === 0 || unreachable) && isUnreachable(err);
        }
      }
      if (todo.length === 0 && audited) return true;
      if (unreachable) {
        const now = performance.now();
        unreachableSince ??= now;
        if (now - unreachableSince < UNREACHABLE_BUDGET_MS) {
          if (tries % 10 === 0) {
            this.ctx.logger.warn(
              { streamSeq: msg.seq, tries, reason },
              'JetStream unreachable for a fan-out; retrying',
            );
          }
          continue;
        }
      }
      attempt += 1;
      this.ctx.logger.warn({ streamSeq: msg.seq, attempt, recipients: todo, reason }, 'delivery failed; retrying');
    }
    return this.#park({ envelope, streamSeq: msg.seq, recipients: todo, reason }, msg);
  }

  /** Not stopping, and holding the writer lease now: a fan-out goes on at once. */
  #serving(): boolean {
    return !this.#stopping && this.ctx.lease.holds();
  }

  /**
   * Whether this hub may go on fanning out `msg`: true at once while it holds the writer lease. While the lease has
   * lapsed (it may yet be renewed, see `keepLease`) it waits, keeping `msg` from being redelivered meanwhile; false
   * once the deliverer stops (the term ended: a successor may serve and pull the same consumer, and what this hub has
   * not finished goes back to it unacked).
   */
  async #mayGoOn(msg: JsMsg): Promise<boolean> {
    // Callers ask `#serving()` first, so the fan-out of a hub that holds its lease never awaits here.
    for (let waited = 0; !this.#stopping && !this.ctx.lease.holds(); waited += LAPSE_CHECK_MS) {
      if (waited % 1_000 === 0) msg.working();
      if (!(await this.#pause(LAPSE_CHECK_MS))) return false;
    }
    return !this.#stopping;
  }

  /** Dead-letters a delivery, retrying the record's write; true once kept, false when the hub stopped first. */
  async #park(letter: DeadLetter, msg: JsMsg): Promise<boolean> {
    for (let tries = 0; ; tries += 1) {
      if (!this.#serving() && !(await this.#mayGoOn(msg))) return false;
      try {
        await deadLetter(this.ctx, letter);
        return true;
      } catch (err) {
        // The dead letter is a write too; until it is kept, the message stays unacked and in the window.
        this.ctx.logger.warn({ err, streamSeq: msg.seq, tries }, 'writing a dead letter failed; retrying');
        msg.working();
        if (!(await this.#pause(Math.min(UNREACHABLE_BACKOFF_MAX_MS, FIRST_BACKOFF_MS * 2 ** Math.min(tries, 10)))))
          return false;
      }
    }
  }

  /** Publishes to each recipient's inbox; returns those whose inbox did not take it, with why. */
  async #publish(
    envelope: Envelope,
    msg: JsMsg,
    recipients: readonly string[],
  ): Promise<{ recipient: string; reason: string; unreachable: boolean }[]> {
    const results = await Promise.allSettled(
      recipients.map((rid) => {
        // The origin mark clients require; a fresh header set per publish, since `msgID` is added to it.
        const h = headers();
        h.set(DeliveryHeader.Origin, DELIVERY_ORIGIN_HUB);
        return this.ctx.js.publish(this.ctx.names.inbox(rid), msg.data, {
          msgID: `${envelope.envelope_id}.${rid}`,
          headers: h,
        });
      }),
    );
    const failed: { recipient: string; reason: string; unreachable: boolean }[] = [];
    results.forEach((result, i) => {
      const recipient = recipients[i];
      if (result.status === 'rejected' && recipient !== undefined) {
        const err: unknown = result.reason;
        failed.push({
          recipient,
          reason: err instanceof Error ? err.message : String(err),
          unreachable: isUnreachable(err),
        });
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
    } else item.msg.nak();
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
        this.ctx.logger.error({ err, ...channelFields(rt.metadata) }, 'closing a channel failed'),
      );
  }
}

/**
 * The failure only says JetStream could not be reached now: a timeout, or no responders (nats.js reports those on a
 * JetStream subject as `JetStreamNotEnabled`), as while a stream elects a leader. A refusal the server did answer
 * (an inbox full, a rejected message) is not.
 */
function isUnreachable(err: unknown): boolean {
  if (err instanceof TimeoutError) return true;
  if (err instanceof RequestError) return err.isNoResponders() || err.cause instanceof TimeoutError;
  return err instanceof Error && err.name === 'JetStreamNotEnabled';
}
