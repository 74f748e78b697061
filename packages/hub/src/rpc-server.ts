import {
  HUB_OPS,
  HUB_OP_NAMES,
  IdSchema,
  InvalidRequestError,
  toNetworkError,
  type HubNames,
  type HubOp,
  type HubRequestParsed,
  type HubResponse,
} from '@ag2net/protocol';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from './logger.js';

/** One handler per operation; `caller` is the agent id from the subject (`''` for operations without one). */
export type HubHandlers = {
  readonly [Op in HubOp]: (request: HubRequestParsed<Op>, caller: string) => Promise<HubResponse<Op>> | HubResponse<Op>;
};

/**
 * Serves the hub's operations on `<prefix>.hub.v1.<op>[.<caller>]` (queue group `hub`). Every request is parsed
 * with its zod schema; every failure becomes `{ ok: false, error: { code, message } }`, never a crash.
 */
export class RpcServer {
  #subs: Subscription[] = [];

  constructor(
    private readonly nc: NatsConnection,
    private readonly names: HubNames,
    private readonly logger: Logger,
  ) {}

  start(handlers: HubHandlers): void {
    for (const op of HUB_OP_NAMES) {
      const withCaller = HUB_OPS[op].caller;
      const sub = this.nc.subscribe(this.names.rpcListen(op, withCaller), {
        queue: 'hub',
        callback: (err, msg) => {
          if (err !== null) {
            this.logger.error({ err, op }, 'rpc subscription failed');
            return;
          }
          void this.#handle(op, msg, handlers);
        },
      });
      this.#subs.push(sub);
    }
  }

  /** Stops taking requests; requests in flight finish. */
  async stop(): Promise<void> {
    const subs = this.#subs;
    this.#subs = [];
    await Promise.all(subs.map((s) => s.drain().catch(() => undefined)));
  }

  async #handle<Op extends HubOp>(op: Op, msg: Msg, handlers: HubHandlers): Promise<void> {
    let reply: string;
    try {
      const caller = HUB_OPS[op].caller ? callerOf(msg.subject) : '';
      const request = parseRequest(op, msg);
      const handler: (request: HubRequestParsed<Op>, caller: string) => unknown = handlers[op];
      const result = await handler(request, caller);
      reply = JSON.stringify({ ok: true, result });
    } catch (thrown) {
      const err = toNetworkError(thrown);
      if (err.code === 'internal') this.logger.error({ err: thrown, op }, 'rpc failed');
      else this.logger.debug({ op, code: err.code, message: err.message }, 'rpc rejected');
      reply = JSON.stringify({ ok: false, error: err.toWire() });
    }
    if (msg.reply) msg.respond(reply);
  }
}

function callerOf(subject: string): string {
  const token = subject.slice(subject.lastIndexOf('.') + 1);
  const parsed = IdSchema.safeParse(token);
  if (!parsed.success) throw new InvalidRequestError(`caller id in subject is invalid: ${token}`);
  return parsed.data;
}

function parseRequest<Op extends HubOp>(op: Op, msg: Msg): HubRequestParsed<Op> {
  let json: unknown;
  try {
    json = msg.data.length === 0 ? {} : JSON.parse(msg.string());
  } catch {
    throw new InvalidRequestError(`${op} request is not valid JSON`);
  }
  const parsed = HUB_OPS[op].request.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new InvalidRequestError(`invalid ${op} request: ${issues}`);
  }
  // The schema looked up by `op` is the one `HubRequestParsed<Op>` is inferred from.
  return parsed.data as HubRequestParsed<Op>;
}
