import { A2A_VERSION_HEADER, SSE_HEADERS, formatSSEErrorEvent, formatSSEEvent, type AgentCard } from '@a2a-js/sdk';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { JsonRpcTransportHandler, ServerCallContext, validateVersion } from '@a2a-js/sdk/server';
import type { Logger } from '@ag2net/client';
import { AccessDeniedError, AuthError, InvalidRequestError } from '@ag2net/protocol';
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { People } from '../people.js';
import type { Actor } from '../route.js';
import { SSE_KEEPALIVE_MS } from '../sse.js';
import type { ChannelTaskHandler } from './handler.js';
import { rpcRefusal } from './rpc-errors.js';

/** The refusal of a person whose session ended: the hub no longer serves the identity. */
const SESSION_ENDED = (): AuthError =>
  new AuthError('this session ended: the hub no longer serves this identity; sign in again');

/** A JSON-RPC request as far as the bridge reads it; A2A's transport handler reads the rest. */
const RpcRequestSchema = z.looseObject({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string().max(256), z.number().int(), z.null()]).optional(),
  method: z.string().min(1).max(128),
  params: z.record(z.string(), z.unknown()).optional(),
});

/** What serving one JSON-RPC request takes. */
export interface ServeRpcOptions {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The caller (the bridge's authentication and rate limit); throws its refusals. */
  readonly authorize: () => Promise<Actor>;
  /** The body, read with the bridge's guards; throws its refusals (size, depth, type). */
  readonly readBody: () => Promise<unknown>;
  readonly people: People;
  readonly stop: AbortSignal;
  readonly logger: Logger;
  /** Closes the person's connection on this replica once the hub no longer serves them (their session is over). */
  readonly endSession: (actor: Actor) => Promise<void>;
  /** The handler of the path's agent for `actor`, whose streams end when `signal` aborts. */
  readonly handler: (actor: Actor, signal: AbortSignal) => Promise<{ handler: ChannelTaskHandler; card: AgentCard }>;
}

function sendJson(
  res: ServerResponse,
  answer: { status: number; body: unknown; headers?: Record<string, string> },
): void {
  res.writeHead(answer.status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...answer.headers });
  res.end(JSON.stringify(answer.body));
}

/** Writes a refusal made before dispatch: the bridge's status, a JSON-RPC error body. */
function refuse(res: ServerResponse, err: unknown): void {
  const { status, body } = rpcRefusal(err);
  const headers: Record<string, string> = {};
  if (status === 401) headers['www-authenticate'] = 'Bearer';
  // A body refused before it was read whole leaves the rest of it on the connection: it cannot carry another request.
  if (status === 413) headers['connection'] = 'close';
  sendJson(res, { status, body, headers });
}

/**
 * Serves one A2A JSON-RPC request as the signed-in person: the bridge's refusals (no token, rate, body size and depth)
 * come first, as an HTTP status with a JSON-RPC error body, and nothing reaches the hub; then A2A's transport handler
 * (1.0, or 0.3 for a client that sends no `A2A-Version`) answers JSON, or Server-Sent Events for a stream.
 */
export async function serveRpc(options: ServeRpcOptions): Promise<void> {
  const { req, res } = options;
  const gone = new AbortController();
  res.on('close', () => gone.abort());
  const signal = AbortSignal.any([gone.signal, options.stop]);
  let actor: Actor;
  let request: z.output<typeof RpcRequestSchema>;
  let served: { handler: ChannelTaskHandler; card: AgentCard };
  try {
    actor = await options.authorize();
    const parsed = RpcRequestSchema.safeParse(await options.readBody());
    if (!parsed.success) throw new InvalidRequestError('the body is not a JSON-RPC 2.0 request');
    request = parsed.data;
    if (actor.human === null) throw new AccessDeniedError('only a person signed in as themself can do this');
    served = await options.handler(actor, signal);
  } catch (err) {
    refuse(res, err);
    return;
  }
  const header = req.headers[A2A_VERSION_HEADER.toLowerCase()];
  const requestedVersion = typeof header === 'string' && header !== '' ? header : '0.3';
  const legacy = requestedVersion.startsWith('0.');
  const mapError = (err: unknown) =>
    legacy
      ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(err)
      : JsonRpcTransportHandler.mapToJSONRPCError(err);
  const context = new ServerCallContext({
    user: { isAuthenticated: true, userName: actor.name },
    requestedVersion,
  });
  const id = request.id ?? null;
  let answer: Awaited<ReturnType<JsonRpcTransportHandler['handle']>>;
  try {
    const { handler, card } = served;
    validateVersion(requestedVersion, card, 'JSONRPC');
    answer = await (legacy ? new LegacyJsonRpcTransportHandler(handler) : new JsonRpcTransportHandler(handler)).handle(
      request,
      context,
    );
  } catch (err) {
    const error = mapError(err);
    sendJson(res, { status: error.code === -32603 ? 500 : 200, body: { jsonrpc: '2.0', id, error } });
    return;
  }
  if (!(Symbol.asyncIterator in answer)) {
    if (served.handler.sessionEnded) {
      await options.endSession(actor);
      refuse(res, SESSION_ENDED());
      return;
    }
    sendJson(res, { status: 200, body: answer });
    return;
  }
  await streamAnswer({ ...options, answer, id, mapError, actor, signal, handler: served.handler });
}

/** Writes a stream's events as Server-Sent Events; a failure before the first event is a JSON-RPC error response. */
async function streamAnswer(options: {
  readonly res: ServerResponse;
  readonly answer: AsyncGenerator<unknown, void, undefined>;
  readonly id: string | number | null;
  readonly mapError: (err: unknown) => unknown;
  readonly actor: Actor;
  readonly people: People;
  readonly signal: AbortSignal;
  readonly logger: Logger;
  readonly handler: ChannelTaskHandler;
  readonly endSession: (actor: Actor) => Promise<void>;
}): Promise<void> {
  const { res, answer, id } = options;
  const iterator = answer[Symbol.asyncIterator]();
  let first: IteratorResult<unknown, void>;
  try {
    first = await iterator.next();
  } catch (err) {
    if (options.handler.sessionEnded) {
      await options.endSession(options.actor);
      refuse(res, SESSION_ENDED());
      return;
    }
    sendJson(res, { status: 200, body: { jsonrpc: '2.0', id, error: options.mapError(err) } });
    return;
  }
  const release = options.people.hold(options.actor.name);
  res.writeHead(200, { ...SSE_HEADERS, 'cache-control': 'no-store' });
  res.flushHeaders();
  const keepalive = setInterval(() => res.write(': keepalive\n\n'), SSE_KEEPALIVE_MS);
  keepalive.unref();
  const write = async (text: string): Promise<void> => {
    if (!res.write(text) && !res.destroyed) await once(res, 'drain');
  };
  try {
    if (first.done !== true) await write(formatSSEEvent(first.value));
    for (;;) {
      const next = await iterator.next();
      if (next.done === true) break;
      await write(formatSSEEvent(next.value));
    }
  } catch (err) {
    if (!options.signal.aborted) {
      const ended = options.handler.sessionEnded;
      if (!ended) options.logger.warn({ err }, 'a2a stream failed');
      const error = ended ? rpcRefusal(SESSION_ENDED()).body.error : options.mapError(err);
      await write(formatSSEErrorEvent({ jsonrpc: '2.0', id, error })).catch(() => undefined);
      if (ended) await options.endSession(options.actor);
    }
  } finally {
    clearInterval(keepalive);
    release();
    await iterator.return(undefined).catch(() => undefined);
    if (!res.writableEnded) res.end();
  }
}
