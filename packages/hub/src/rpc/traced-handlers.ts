import { type HubOp, HUB_OP_NAMES } from '@ag2net/protocol';
import { toHubError, type HubRequestParsed } from '@ag2net/protocol/internal';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import type { HubHandlers } from './rpc-server.js';
import { contextForTrace, hubTracer, traceIdOfRequest, tracingEnabled } from '../observe/trace.js';

/**
 * The handlers with each request traced: a span `ag2net.rpc <op>` (server kind, in the trace of the request's
 * `trace_id` when it has one; a post gets a child span `ag2net.admit` carrying the channel and the admitted
 * sequence). Results and errors pass through unchanged. (The RPC server reports outcomes to the `HubObserver`.)
 */
export function traceHandlers(handlers: HubHandlers): HubHandlers {
  const wrapped: Partial<Record<HubOp, unknown>> = {};
  for (const op of HUB_OP_NAMES) wrapped[op] = traced(op, handlers);
  // Every op was just filled in with a wrapper that takes its handler's arguments and returns its handler's result.
  return wrapped as HubHandlers;
}

/** The caller a handler is given (`''` for public operations). */
type Caller = Parameters<HubHandlers['health']>[1];

function traced<Op extends HubOp>(
  op: Op,
  handlers: HubHandlers,
): (request: HubRequestParsed<Op>, caller: Caller) => Promise<unknown> {
  const handler: (request: HubRequestParsed<Op>, caller: Caller) => unknown = handlers[op];
  return async (request, caller) => {
    if (!tracingEnabled()) return handler(request, caller);
    const parent = contextForTrace(traceIdOfRequest(request));
    const span = hubTracer().startSpan(
      `ag2net.rpc ${op}`,
      { kind: SpanKind.SERVER, attributes: { 'ag2net.op': op } },
      parent,
    );
    if (String(caller) !== '') span.setAttribute('ag2net.caller_id', String(caller));
    try {
      return await context.with(trace.setSpan(parent, span), () =>
        op === 'post' ? admitted(request, () => handler(request, caller)) : handler(request, caller),
      );
    } catch (err) {
      const code = toHubError(err).code;
      span.setStatus({ code: SpanStatusCode.ERROR, message: code });
      span.setAttribute('ag2net.error_code', code);
      throw err;
    } finally {
      span.end();
    }
  };
}

/** Runs an admission in a span `ag2net.admit` naming the channel and, once admitted, the envelope's sequence. */
async function admitted<T>(request: unknown, admit: () => T | Promise<T>): Promise<T> {
  const span = hubTracer().startSpan('ag2net.admit', { kind: SpanKind.INTERNAL });
  if (typeof request === 'object' && request !== null && 'channel_id' in request) {
    span.setAttribute('ag2net.channel_id', String(request.channel_id));
  }
  try {
    const result = await context.with(trace.setSpan(context.active(), span), admit);
    if (typeof result === 'object' && result !== null) {
      if ('sequence' in result && typeof result.sequence === 'number')
        span.setAttribute('ag2net.sequence', result.sequence);
      if ('envelope_id' in result) span.setAttribute('ag2net.envelope_id', String(result.envelope_id));
    }
    return result;
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: toHubError(err).code });
    throw err;
  } finally {
    span.end();
  }
}
