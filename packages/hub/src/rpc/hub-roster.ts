import type { Health, HubNames } from '@ag2net/protocol';
import { toHubError, HUBS_PING_MAX_REQUEST_BYTES, HubsPingRequestSchema } from '@ag2net/protocol/internal';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { CallerOrigins } from '../auth/caller-origin.js';
import type { Logger } from '../base/logger.js';
import { errorReplyText, parseBoundedRequest } from './rpc-server.js';

/**
 * Answers the hub roster (`names.hubsPing`) with this hub's `Health`, whatever its role: the subscription has no
 * queue group, so every hub of the prefix answers one request and the operator sees the standbys beside the active
 * hub. It runs from the start of the election to the hub's close, across terms.
 *
 * The boundary cannot throw, and parses as the RPC server does (`parseBoundedRequest`): a request larger than
 * `HUBS_PING_MAX_REQUEST_BYTES`, nesting deeper than `MAX_REQUEST_DEPTH`, not JSON or not `{}` is answered with
 * `invalid_request`; a request whose reply subject cannot be attributed to the caller (none, not an inbox, or an
 * imported request from another account or without a server-minted reply: `CallerOrigins`) gets nothing; a failure
 * to answer is a log line.
 */
export class HubRoster {
  #sub: Subscription | null = null;
  readonly #origins: CallerOrigins;

  constructor(
    private readonly nc: NatsConnection,
    private readonly names: HubNames,
    private readonly options: { readonly logger: Logger; readonly importAccount: string | null },
  ) {
    this.#origins = new CallerOrigins({ importAccount: options.importAccount });
  }

  private get logger(): Logger {
    return this.options.logger;
  }

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
    const verdict = this.#origins.of(msg);
    if (!verdict.ok) {
      this.logger.warn({ reason: verdict.reason }, 'hub roster request dropped unanswered');
      return;
    }
    let reply: string;
    try {
      parseBoundedRequest(msg, {
        label: 'hubs ping',
        limit: HUBS_PING_MAX_REQUEST_BYTES,
        schema: HubsPingRequestSchema,
      });
      reply = JSON.stringify({ ok: true, result: health() });
    } catch (thrown) {
      if (toHubError(thrown).code === 'internal') this.logger.error({ err: thrown }, 'hub roster answer failed');
      reply = errorReplyText(thrown);
    }
    try {
      msg.respond(reply);
    } catch (err) {
      this.logger.error({ err }, 'hub roster reply failed');
    }
  }
}
