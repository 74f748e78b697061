import {
  HUBS_PING_MAX_REQUEST_BYTES,
  HubsPingRequestSchema,
  InvalidRequestError,
  MAX_REQUEST_DEPTH,
  formatIssues,
  type Health,
  type HubNames,
} from '@ag2net/protocol';
import { jsonDepthExceeds, toNetworkError } from '@ag2net/protocol/internal';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from './logger.js';

/**
 * Answers the hub roster (`names.hubsPing`) with this hub's `Health`, whatever its role: the subscription has no
 * queue group, so every hub of the prefix answers one request and the operator sees the standbys beside the active
 * hub. It runs from the start of the election to the hub's close, across terms.
 *
 * The boundary cannot throw, like the RPC server's: a request larger than `HUBS_PING_MAX_REQUEST_BYTES`, nesting
 * deeper than `MAX_REQUEST_DEPTH`, not JSON or not `{}` is answered with `invalid_request`; a request without a
 * reply subject gets nothing; a failure to answer is a log line.
 */
export class HubRoster {
  #sub: Subscription | null = null;

  constructor(
    private readonly nc: NatsConnection,
    private readonly names: HubNames,
    private readonly logger: Logger,
  ) {}

  /** Answers roster requests with `health()` until `stop()`. Idempotent. */
  start(health: () => Health): void {
    if (this.#sub !== null) return;
    const sub = this.nc.subscribe(this.names.hubsPing, {
      callback: (err, msg) => {
        if (err !== null) {
          this.logger.error({ err }, 'hub roster subscription failed');
          return;
        }
        this.#answer(msg, health);
      },
    });
    this.#sub = sub;
    // A subscription the server refuses (a missing permission) ends here; the hub serves on without a roster entry.
    void sub.closed.then((err) => {
      if (err instanceof Error) this.logger.error({ err }, 'hub roster subscription ended');
    });
  }

  /** Stops answering. */
  async stop(): Promise<void> {
    const sub = this.#sub;
    this.#sub = null;
    if (sub !== null && !sub.isClosed()) await sub.drain().catch(() => undefined);
  }

  #answer(msg: Msg, health: () => Health): void {
    let reply: string;
    try {
      checkRequest(msg);
      reply = JSON.stringify({ ok: true, result: health() });
    } catch (thrown) {
      const err = toNetworkError(thrown);
      if (err.code === 'internal') this.logger.error({ err: thrown }, 'hub roster answer failed');
      reply = JSON.stringify({ ok: false, error: { code: err.code, message: err.message } });
    }
    if (!msg.reply) return;
    try {
      msg.respond(reply);
    } catch (err) {
      this.logger.error({ err }, 'hub roster reply failed');
    }
  }
}

/** Throws `invalid_request` unless the request is empty or `{}` within the size and depth bounds. */
function checkRequest(msg: Msg): void {
  const size = msg.data.length;
  if (size > HUBS_PING_MAX_REQUEST_BYTES) {
    throw new InvalidRequestError(
      `hubs ping request of ${size} bytes exceeds the limit of ${HUBS_PING_MAX_REQUEST_BYTES} bytes`,
    );
  }
  if (size === 0) return;
  const text = msg.string();
  if (jsonDepthExceeds(text, MAX_REQUEST_DEPTH)) {
    throw new InvalidRequestError(`hubs ping request nests deeper than ${MAX_REQUEST_DEPTH} levels`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new InvalidRequestError('hubs ping request is not valid JSON');
  }
  const parsed = HubsPingRequestSchema.safeParse(json);
  if (!parsed.success) throw new InvalidRequestError(formatIssues('invalid hubs ping request', parsed.error.issues));
}
