import { repr } from '@ag2net/protocol/internal';
import { UnavailableError } from '@ag2net/protocol';
import { JetStreamApiError, PubHeaders, type JetStreamManager, type PubAck } from '@nats-io/jetstream';
import { BaseApiClientImpl } from '@nats-io/jetstream/internal';
import {
  createInbox,
  headers as natsHeaders,
  nuid,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  type Subscription,
} from '@nats-io/transport-node';
import { z } from 'zod';

/** How often pending requests are checked for their deadline, ms: a timeout fires up to this much late. */
const SWEEP_EVERY_MS = 50;
/** The status nats-server answers a request with when nothing subscribes to its subject. */
const NO_RESPONDERS = '503';

/**
 * Nothing answered a request of the outbox: the server said nobody subscribes to the subject (`no_responders`, as
 * while a stream elects a leader, or a subject no stream captures), or no answer came in time (`timeout`). Either way
 * the publish may or may not have been stored; a JetStream publish is retried with the same msg id.
 */
export class OutboxUnreachableError extends Error {
  override readonly name = 'OutboxUnreachableError';
  constructor(
    readonly reason: 'no_responders' | 'timeout',
    subject: string,
  ) {
    super(`${reason === 'timeout' ? 'no answer in time' : 'no responders'} on ${subject}`);
  }
}

/** How to publish to a stream. */
export interface StreamPublish {
  /** `Nats-Msg-Id`, the stream's dedupe key. */
  readonly msgId?: string;
  /** `Nats-Expected-Last-Subject-Sequence`: refused unless the subject's last message is at this stream sequence. */
  readonly expectedLastSubjectSeq?: number;
  /** More headers; the two above are added to this set. */
  readonly headers?: MsgHdrs;
  /** How long to wait for the PubAck, ms. */
  readonly timeoutMs: number;
}

/**
 * The error a stream answered a publish with, or a PubAck. The error first: a refusal also carries `stream` and
 * `seq: 0`.
 */
const PubAckSchema = z.union([
  z.object({
    error: z.object({ code: z.number().int(), err_code: z.number().int().default(0), description: z.string() }),
  }),
  z.object({ stream: z.string().min(1), seq: z.number().int().positive(), duplicate: z.boolean().optional() }),
]);

interface Pending {
  readonly subject: string;
  readonly deadline: number;
  readonly resolve: (msg: Msg) => void;
  readonly reject: (err: Error) => void;
}

/**
 * The hub's outbound messages on its connection, sent together: every publish and request made during one turn of
 * the event loop goes to the connection in one go at the end of it (`setImmediate`), so that nats.js writes them to
 * the socket in one call instead of one per microtask checkpoint, and requests share one reply subscription with one
 * deadline sweep instead of a subscription entry, a timer and three `Error`s each (nats.js's `request`). Messages keep
 * the order they were given in. Requests are answered on `<inbox prefix>.<nuid>.<nuid>` under the connection's
 * `inboxPrefix`, which only the hub's identity subscribes to; an answer to a token no request is waiting on is dropped.
 */
export class Outbox {
  readonly #nc: NatsConnection;
  readonly #replyPrefix: string;
  readonly #sub: Subscription;
  /** Pending requests by token, per timeout: each map's entries are in deadline order, so a sweep stops early. */
  readonly #pending = new Map<number, Map<string, Pending>>();
  /** What this turn sends, in order; each either publishes or fails the request it was for. */
  #queue: (() => void)[] = [];
  #flushScheduled = false;
  #sweeper: NodeJS.Timeout | null = null;
  #closed = false;

  /** `inboxPrefix`: the connection's (`inboxPrefixOf`), under which its identity may receive answers. */
  constructor(nc: NatsConnection, inboxPrefix: string | undefined) {
    this.#nc = nc;
    this.#replyPrefix = `${createInbox(inboxPrefix)}.`;
    this.#sub = nc.subscribe(`${this.#replyPrefix}*`, { callback: (_err, msg) => this.#answer(msg) });
  }

  /**
   * Runs `send`, which writes to the connection by other means (a JetStream message's ack, an RPC reply), at the end
   * of this turn with the rest, so that it shares their socket write; at once once the outbox is closed. What it
   * throws is dropped: the connection closed, and whatever waits on an answer learns it from its own timeout.
   */
  send(send: () => void): void {
    if (this.#closed) {
      runDroppingErrors(send);
      return;
    }
    this.#queue.push(send);
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => this.#flush());
  }

  /** Sends a request; resolves with the first answer, rejects with `OutboxUnreachableError` when none comes. */
  request(subject: string, data: Uint8Array | string, options: { headers?: MsgHdrs; timeoutMs: number }): Promise<Msg> {
    const token = nuid.next();
    const { timeoutMs } = options;
    const reply = this.#replyPrefix + token;
    return new Promise<Msg>((resolve, reject) => {
      if (this.#closed) throw new UnavailableError('the hub is stopping; retry');
      this.send(() => {
        try {
          this.#nc.publish(subject, data, { reply, headers: options.headers });
        } catch (err) {
          // The connection is closed or draining: the request learns it now, not at its deadline.
          this.#settle(token)?.reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
      let byTimeout = this.#pending.get(timeoutMs);
      if (byTimeout === undefined) {
        byTimeout = new Map();
        this.#pending.set(timeoutMs, byTimeout);
      }
      byTimeout.set(token, { subject, deadline: performance.now() + timeoutMs, resolve, reject });
      this.#sweeper ??= setInterval(() => this.#sweep(), SWEEP_EVERY_MS).unref();
    });
  }

  /**
   * Publishes to a stream and resolves with its PubAck. A stream's refusal is the `JetStreamApiError` nats.js raises
   * (its `code` the JetStream error code, `status` the HTTP-like one); nothing answering is `OutboxUnreachableError`.
   */
  async publishToStream(subject: string, data: Uint8Array | string, options: StreamPublish): Promise<PubAck> {
    const headers = options.headers ?? natsHeaders();
    if (options.msgId !== undefined) headers.set(PubHeaders.MsgIdHdr, options.msgId);
    if (options.expectedLastSubjectSeq !== undefined) {
      headers.set(PubHeaders.ExpectedLastSubjectSequenceHdr, String(options.expectedLastSubjectSeq));
    }
    const answer = await this.request(subject, data, { headers, timeoutMs: options.timeoutMs });
    const parsed = PubAckSchema.safeParse(parseJson(answer.data));
    if (!parsed.success) throw new Error(`the stream's answer to a publish on ${repr(subject)} is not a PubAck`);
    const ack = parsed.data;
    if ('error' in ack) throw new JetStreamApiError(ack.error);
    return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate ?? false };
  }

  /**
   * Sends what is queued; from now on requests are refused and pending ones rejected with `UnavailableError`, and
   * anything else is sent at once.
   */
  close(): void {
    if (this.#closed) return;
    this.#flush();
    this.#closed = true;
    this.#sub.unsubscribe();
    if (this.#sweeper !== null) clearInterval(this.#sweeper);
    this.#sweeper = null;
    const stopping = new UnavailableError('the hub is stopping; retry');
    for (const byTimeout of this.#pending.values()) for (const p of byTimeout.values()) p.reject(stopping);
    this.#pending.clear();
  }

  [Symbol.dispose](): void {
    this.close();
  }

  #flush(): void {
    this.#flushScheduled = false;
    const queue = this.#queue;
    if (queue.length === 0) return;
    this.#queue = [];
    for (const send of queue) runDroppingErrors(send);
  }

  #answer(msg: Msg): void {
    const pending = this.#settle(msg.subject.slice(this.#replyPrefix.length));
    if (pending === undefined) return;
    if (msg.data.length === 0 && msg.headers?.code === Number(NO_RESPONDERS)) {
      pending.reject(new OutboxUnreachableError('no_responders', pending.subject));
    } else {
      pending.resolve(msg);
    }
  }

  /** Takes the pending request of `token` off the books, if it is still waiting. */
  #settle(token: string): Pending | undefined {
    for (const byTimeout of this.#pending.values()) {
      const pending = byTimeout.get(token);
      if (pending !== undefined) {
        byTimeout.delete(token);
        return pending;
      }
    }
    return undefined;
  }

  #sweep(): void {
    const now = performance.now();
    let waiting = 0;
    for (const byTimeout of this.#pending.values()) {
      for (const [token, pending] of byTimeout) {
        if (pending.deadline > now) break;
        byTimeout.delete(token);
        pending.reject(new OutboxUnreachableError('timeout', pending.subject));
      }
      waiting += byTimeout.size;
    }
    if (waiting === 0 && this.#sweeper !== null) {
      clearInterval(this.#sweeper);
      this.#sweeper = null;
    }
  }
}

function runDroppingErrors(send: () => void): void {
  try {
    send();
  } catch {
    // The connection closed: see `Outbox.send`.
  }
}

/** The `inboxPrefix` the connection of `jsm` was opened with, if it can be read (nats.js keeps it in its options). */
export function inboxPrefixOf(jsm: JetStreamManager): string | undefined {
  return jsm instanceof BaseApiClientImpl ? jsm.nc.options.inboxPrefix : undefined;
}

const utf8 = new TextDecoder();

function parseJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(utf8.decode(data));
  } catch {
    return null;
  }
}
