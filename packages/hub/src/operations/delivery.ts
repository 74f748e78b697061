import { ChannelState, type Envelope } from '@ag2net/protocol';
import type { ConsumeOptions, Consumer, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { setTimeout as sleep } from 'node:timers/promises';
import { observedDelivery } from './observed-delivery.js';
import { channelFields } from '../base/log-names.js';
import { ConsumeWatchdog } from './consume-watchdog.js';
import { fanOutEnvelope, type FanOutDeps, type FanOutGate } from './fan-out-envelope.js';
import { finishCloseLocked, type EndDeps } from './lifecycle.js';
import { auditQuarantined, type QuarantineDeps } from './quarantine.js';
import { checkForDelivery } from './wal-scan.js';
import type { HubEnv } from '../partition/hub-parts.js';
import type { PartitionPick } from '../partition/partition.js';

/** How many WAL messages are fanned out at once (different channels in parallel, one channel in order). */
const WINDOW = 256;
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
/** How often a fan-out waiting out a lapsed lease looks at it again, ms. */
const LAPSE_CHECK_MS = 50;

/**
 * What the deliverer uses: the partition's delivery consumer and how far it got, the fan-out, the end of a channel
 * whose drain it completes, and the lease it delivers under.
 */
export type DelivererDeps = FanOutDeps &
  EndDeps &
  QuarantineDeps &
  Pick<HubEnv, 'js' | 'outbox' | 'names' | 'observer' | 'logger' | 'clock'> &
  PartitionPick<'channels' | 'lease' | 'serial' | 'deliveredThrough' | 'writer'>;

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
 * (`fanOutEnvelope`); a WAL message that is no envelope is quarantined; a throwing arbiter denies one recipient. Each
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
  /** What each fan-out asks of this deliverer (see `fanOutEnvelope`). */
  readonly #gate: FanOutGate = {
    serving: () => this.#serving(),
    mayGoOn: (msg) => this.#mayGoOn(msg),
    pause: (ms) => this.#pause(ms),
  };

  constructor(
    private readonly ctx: DelivererDeps,
    /** When a silent consume counts as stalled; see `ConsumeWatchdog`. */
    private readonly watch: { readonly stallMs: number; readonly checkMs: number } = DEFAULT_WATCH,
  ) {}

  async start(): Promise<void> {
    this.#stopping = false;
    this.#abort = new AbortController();
    this.ctx.partition.writer.forgetFresh();
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
    this.ctx.partition.writer.forgetFresh();
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
    const { partition } = this.ctx;
    const fresh = partition.writer.takeFresh(item.msg.seq);
    const checked = checkForDelivery(this.ctx.names, item.msg, { channel: (id) => partition.channels.get(id), fresh });
    if (!checked.ok) {
      void this.#quarantine(item, checked.reason);
      return;
    }
    const envelope = checked.envelope;
    item.envelope = envelope;
    const channelId = envelope.channel_id;
    const chain = (this.#chains.get(channelId) ?? Promise.resolve()).then(async () => {
      const done = await observedDelivery(this.ctx, envelope, () =>
        fanOutEnvelope(this.ctx, { envelope, msg: item.msg }, this.#gate),
      );
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

  /** Not stopping, and holding the writer lease now: a fan-out goes on at once. */
  #serving(): boolean {
    return !this.#stopping && this.ctx.partition.lease.holds();
  }

  /**
   * Whether this hub may go on fanning out `msg`: true at once while it holds the writer lease. While the lease has
   * lapsed (it may yet be renewed, see `keepLease`) it waits, keeping `msg` from being redelivered meanwhile; false
   * once the deliverer stops (the term ended: a successor may serve and pull the same consumer, and what this hub has
   * not finished goes back to it unacked).
   */
  async #mayGoOn(msg: JsMsg): Promise<boolean> {
    // Callers ask `#serving()` first, so the fan-out of a hub that holds its lease never awaits here.
    for (let waited = 0; !this.#stopping && !this.ctx.partition.lease.holds(); waited += LAPSE_CHECK_MS) {
      if (waited % 1_000 === 0) msg.working();
      if (!(await this.#pause(LAPSE_CHECK_MS))) return false;
    }
    return !this.#stopping;
  }

  /** Acks a finished message at once, then moves the contiguous floor past every done message at the head. */
  #finish(item: InFlight, outcome: 'done' | 'stopped'): void {
    item.outcome = outcome;
    this.#pending -= 1;
    if (outcome === 'done') {
      // With the inbox publishes of this turn, in one socket write.
      this.ctx.outbox.send(() => item.msg.ack());
      if (item.envelope !== null) this.#maybeFinishClose(item.envelope);
    } else item.msg.nak();
    while (this.#window[0]?.outcome === 'done') {
      const head = this.#window.shift();
      if (head === undefined) break;
      if (head.msg.seq > this.ctx.partition.deliveredThrough) this.ctx.partition.deliveredThrough = head.msg.seq;
      // A channel that began closing while this message waited behind another channel's can end now.
      if (head.envelope !== null) this.#maybeFinishClose(head.envelope);
    }
    if (this.#pending < WINDOW || this.#stopping) for (const resolve of this.#roomWaiters.splice(0)) resolve();
  }

  /** A closing channel whose admitted envelopes are all delivered ends now. */
  #maybeFinishClose(envelope: Envelope): void {
    const rt = this.ctx.partition.channels.get(envelope.channel_id);
    if (rt === undefined || rt.metadata.state !== ChannelState.Closing || rt.closingAt === null) return;
    if ((envelope.sequence ?? 0) < rt.closingAt) return;
    void this.ctx.partition.serial
      .run(envelope.channel_id, () => finishCloseLocked(this.ctx, rt))
      .catch((err: unknown) =>
        this.ctx.logger.error({ err, ...channelFields(rt.metadata) }, 'closing a channel failed'),
      );
  }
}
