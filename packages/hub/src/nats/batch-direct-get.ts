import { BaseApiClientImpl, DirectMsgImpl, JetStreamStatus } from '@nats-io/jetstream/internal';
import type { JetStreamManager, StoredMsg } from '@nats-io/jetstream';
import {
  NoRespondersError,
  RequestError,
  TimeoutError,
  createInbox,
  type NatsConnection,
} from '@nats-io/transport-node';

/** The first nats-server release that answers a batch direct get (`batch` in a `$JS.API.DIRECT.GET` request). */
export const BATCH_DIRECT_GET_SINCE = '2.11.0';

/** Status codes that end a direct get's answer: nothing found, the batch's end, nothing serves the stream. */
const NOT_FOUND = 404;
const END_OF_BATCH = 204;
const NO_RESPONDERS = 503;

/**
 * Whether the server `nc` is connected to answers batch direct gets: its version in the connection's INFO is
 * `BATCH_DIRECT_GET_SINCE` or later, compared numerically. `false` before the first INFO or for a version it cannot
 * read. After a reconnect it is the new server's answer.
 */
export function hasBatchDirectGet(nc: Pick<NatsConnection, 'info'>): boolean {
  return versionAtLeast(nc.info?.version, BATCH_DIRECT_GET_SINCE);
}

/** Whether `version` (`major.minor.patch`, with any pre-release suffix ignored) is `min` or later. */
export function versionAtLeast(version: string | undefined, min: string): boolean {
  const have = parts(version);
  const want = parts(min);
  if (have === null || want === null) return false;
  for (let i = 0; i < 3; i += 1) {
    const [a, b] = [have[i] ?? 0, want[i] ?? 0];
    if (a !== b) return a > b;
  }
  return true;
}

function parts(version: string | undefined): number[] | null {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version ?? '');
  return m === null ? null : m.slice(1).map(Number);
}

/** A batch direct get's answer. */
export interface DirectBatch {
  /** The messages, in stream order. */
  readonly messages: readonly StoredMsg[];
  /**
   * Whether the server that answered has more messages on the subject after the last one (the batch or its byte
   * limit ended the answer); `false` when it had no more, or found none at all.
   */
  readonly more: boolean;
}

/** The request of one batch: from stream sequence `seq`, at most `batch` messages on subject `next_by_subj`. */
export interface DirectBatchRequest {
  readonly seq: number;
  readonly next_by_subj: string;
  readonly batch: number;
}

/** Reads one batch of a stream by direct get. */
export type DirectBatchReader = (stream: string, request: DirectBatchRequest) => Promise<DirectBatch>;

/**
 * A reader of batch direct gets on `jsm`'s connection, with its API prefix, reply-inbox prefix and request timeout,
 * or `null` when the server it talks to has no batch direct get (or `jsm` is not nats.js's own manager, whose
 * connection is the only way to the server's version).
 *
 * The reader rejects as a request on that connection would: `RequestError` (cause `NoRespondersError`) when nothing
 * serves the stream's direct gets, `TimeoutError` when the first message or any next one of the answer takes longer
 * than the timeout (a server that stopped mid-way), `JetStreamStatusError` for any other status. It never resolves
 * with part of an answer.
 */
export function batchDirectReader(jsm: JetStreamManager): DirectBatchReader | null {
  if (!(jsm instanceof BaseApiClientImpl) || !hasBatchDirectGet(jsm.nc)) return null;
  const { nc, prefix, timeout } = jsm;
  const inboxPrefix = nc.options.inboxPrefix;
  return (stream, request) =>
    readBatch({ nc, subject: `${prefix}.DIRECT.GET.${stream}`, inboxPrefix, timeout }, request);
}

interface BatchTarget {
  readonly nc: NatsConnection;
  readonly subject: string;
  readonly inboxPrefix: string | undefined;
  readonly timeout: number;
}

function readBatch(target: BatchTarget, request: DirectBatchRequest): Promise<DirectBatch> {
  const { nc, subject, timeout } = target;
  return new Promise((resolve, reject) => {
    const messages: StoredMsg[] = [];
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (outcome: DirectBatch | Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sub.unsubscribe();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const arm = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => finish(new TimeoutError()), timeout);
    };
    const sub = nc.subscribe(createInbox(target.inboxPrefix), {
      callback: (err, msg) => {
        if (err !== null) return finish(err);
        if (msg.headers === undefined) return finish(new Error(`${subject} answered a message without headers`));
        const code = msg.headers.code;
        if (code === 0) {
          const m = new DirectMsgImpl(msg);
          messages.push(m);
          // A server before 2.11 (a replica of another version in a mixed cluster) answers one message and no
          // more: its message carries no `Nats-Num-Pending`, and the next batch goes on after it.
          if (m.pending < 0) return finish({ messages, more: true });
          return arm();
        }
        if (code === END_OF_BATCH) {
          const pending = Number(msg.headers.get('Nats-Num-Pending') || '0');
          return finish({ messages, more: messages.length > 0 && pending > 0 });
        }
        if (code === NOT_FOUND) return finish({ messages, more: false });
        if (code === NO_RESPONDERS && msg.data.length === 0) {
          return finish(new RequestError(`no responders: '${subject}'`, { cause: new NoRespondersError(subject) }));
        }
        return finish(new JetStreamStatus(msg).toError());
      },
    });
    // Settles the read when the connection closes under it (after it settled, `finish` does nothing).
    void sub.closed.then(() => finish(new RequestError('connection closed')));
    arm();
    try {
      nc.publish(subject, JSON.stringify(request), { reply: sub.getSubject() });
    } catch (err) {
      finish(err instanceof Error ? err : new RequestError(String(err)));
    }
  });
}
