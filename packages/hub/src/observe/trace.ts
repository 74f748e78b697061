import { contextForTrace as contextInTrace } from '@ag2net/protocol/internal';
import { ProxyTracerProvider, context, trace, type Context, type Tracer } from '@opentelemetry/api';

const TRACER_NAME = '@ag2net/hub';

/** The hub's tracer; spans cost nothing until a tracer provider is installed (hub-service does, from `OTEL_*`). */
export function hubTracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

/**
 * Whether a tracer provider is installed, so that the hub's spans go anywhere. Without one, the RPC and delivery
 * paths skip span and context bookkeeping altogether (a no-op span still cost a context copy, a closure and two
 * promise hops per request). Asked per request, so a provider installed after the hub started is used from then on.
 */
export function tracingEnabled(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegateTracer(TRACER_NAME) !== undefined;
}

/** The context a span for an envelope of trace `traceId` starts in (`contextForTrace` of @ag2net/protocol/internal). */
export function contextForTrace(traceId: string | null | undefined): Context {
  return contextInTrace(traceId, context.active(), trace);
}

/** The `trace_id` a request carries (a post is an envelope), if any. */
export function traceIdOfRequest(request: unknown): string | null {
  if (typeof request !== 'object' || request === null || !('trace_id' in request)) return null;
  return typeof request.trace_id === 'string' ? request.trace_id : null;
}
