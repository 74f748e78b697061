import { traceAnchorOf } from '@ag2net/protocol';
import { ProxyTracerProvider, TraceFlags, context, trace, type Context, type Tracer } from '@opentelemetry/api';

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

/**
 * The context a span for an envelope with `traceId` starts in: the active one when it already belongs to that
 * trace, else one whose remote parent is the trace's anchor (`traceAnchorOf`), so that the hub's spans join the
 * sender's trace. A missing or foreign trace id leaves the active context.
 */
export function contextForTrace(traceId: string | null | undefined): Context {
  const active = context.active();
  const anchor = traceAnchorOf(traceId);
  if (anchor === null) return active;
  if (trace.getSpanContext(active)?.traceId === anchor.traceId) return active;
  return trace.setSpanContext(active, {
    traceId: anchor.traceId,
    spanId: anchor.spanId,
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
  });
}

/** The `trace_id` a request carries (a post is an envelope), if any. */
export function traceIdOfRequest(request: unknown): string | null {
  if (typeof request !== 'object' || request === null || !('trace_id' in request)) return null;
  return typeof request.trace_id === 'string' ? request.trace_id : null;
}
