import { ErrorCode, InvalidRequestError, type Envelope, type WireError } from '@ag2net/protocol';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamQuerySchema } from './api-schemas.js';
import { httpErrorOf } from './http-errors.js';
import type { People } from './people.js';
import type { Actor, Route } from './route.js';
import { hubNoLongerServes } from './session-end.js';
import { SseWriter } from './sse.js';
import {
  decodeCursor,
  openChannelStream,
  runChannelStream,
  runDeliveriesStream,
  startCursor,
  type StreamWait,
} from './streams.js';

/** A sequence in `Last-Event-ID` (or `last_event_id`): a whole number. */
function sequenceOf(id: string): number {
  if (!/^\d{1,15}$/.test(id)) throw new InvalidRequestError('Last-Event-ID is not a sequence');
  return Number(id);
}

/** The `error` event that ends a person's stream whose session is over. */
const SESSION_ENDED: { error: WireError } = {
  error: { code: ErrorCode.AuthFailed, message: 'this session ended: the identity was revoked; sign in again' },
};

/**
 * Whether a stream's error ends the person's session: their connection closed for good (it reconnects through any
 * outage, so NATS refuses the identity's credentials now: revoked, or not renewed), or the hub no longer serves the
 * identity. A revocation reaches both, the hub first: whichever the stream meets, the session is over.
 */
function endsSession(actor: Actor, err: unknown): boolean {
  return actor.human !== null && (actor.human.hub.nc.isClosed() || hubNoLongerServes(err));
}

/**
 * Serves a stream route: what can be refused is checked before the response starts (so it is an HTTP error); once
 * streaming, an error ends the stream with an `error` event carrying the wire error.
 */
export async function serveStream(options: {
  readonly route: Route;
  readonly actor: Actor;
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly people: People;
  readonly pollMs: number;
  readonly stop: AbortSignal;
  /** Told when the stream starts (`+1`, once the response is an event stream) and ends (`-1`). */
  readonly streamsChanged?: (delta: 1 | -1) => void;
  /** Closes the person's connection on this replica once their session is over (their next request is refused). */
  readonly endSession: (actor: Actor) => Promise<void>;
}): Promise<void> {
  const { actor, req, res } = options;
  const parsed = StreamQuerySchema.safeParse(options.query);
  if (!parsed.success) throw new InvalidRequestError('invalid query');
  const query = parsed.data;
  const header = req.headers['last-event-id'];
  const lastEventId = (typeof header === 'string' ? header : undefined) ?? query.last_event_id;
  const gone = new AbortController();
  res.on('close', () => gone.abort());
  const human = actor.human;
  const wait: StreamWait = {
    pollMs: options.pollMs,
    signal: AbortSignal.any([gone.signal, options.stop]),
    onDelivery:
      human === null
        ? null
        : (wake) => {
            const callback = (envelope: Envelope) => wake(envelope);
            human.onEnvelope(callback);
            return () => human.removeEnvelopeCallback(callback);
          },
  };
  let run: (out: SseWriter) => Promise<void>;
  if (options.route.path === '/v1/me/stream') {
    if (human === null) throw new InvalidRequestError('deliveries are a person’s');
    const cursor =
      lastEventId === undefined ? await startCursor(actor, query.from ?? 'now') : decodeCursor(lastEventId);
    run = (out) => runDeliveriesStream({ actor, agentId: human.agentId, cursor, out, wait });
  } else {
    const channelId = options.params['channel_id'] ?? '';
    const since = lastEventId === undefined ? (query.since ?? 1) : sequenceOf(lastEventId) + 1;
    const first = await openChannelStream(actor, channelId, since);
    run = (out) => runChannelStream({ actor, channelId, first, since, out, wait });
  }
  const release = actor.role === 'person' ? options.people.hold(actor.name) : () => undefined;
  const out = new SseWriter(res);
  options.streamsChanged?.(1);
  try {
    await run(out);
  } catch (err) {
    const ended = endsSession(actor, err);
    if (!wait.signal.aborted) {
      await out.send({ event: 'error', data: ended ? SESSION_ENDED : httpErrorOf(err).body }).catch(() => undefined);
    }
    if (ended) await options.endSession(actor);
  } finally {
    options.streamsChanged?.(-1);
    release();
    out.end();
  }
}
