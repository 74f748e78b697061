import { traceAnchorOf } from './trace-id.js';

/** A remote parent span: the anchor of a trace (`traceAnchorOf`), sampled. OpenTelemetry's `SpanContext` shape. */
export interface RemoteSpanContext {
  readonly traceId: string;
  readonly spanId: string;
  /** W3C trace flags: always 1, sampled (`TraceFlags.SAMPLED`). */
  readonly traceFlags: number;
  readonly isRemote: true;
}

/**
 * What `contextForTrace` calls of a tracing API: `@opentelemetry/api`'s `trace` is one. Structural, so that this
 * package depends on no tracing library and each caller passes the one it uses.
 */
export interface SpanContextApi<TContext> {
  getSpanContext(context: TContext): { readonly traceId: string } | undefined;
  setSpanContext(context: TContext, spanContext: RemoteSpanContext): TContext;
}

/**
 * The context a span for an envelope of trace `traceId` starts in: `active` when it already belongs to that trace,
 * else `active` with the trace's anchor (`traceAnchorOf`) as remote parent, so that the spans of every process join
 * the sender's trace. A missing or foreign trace id leaves `active`.
 */
export function contextForTrace<TContext>(
  traceId: string | null | undefined,
  active: TContext,
  api: SpanContextApi<TContext>,
): TContext {
  const anchor = traceAnchorOf(traceId);
  if (anchor === null) return active;
  if (api.getSpanContext(active)?.traceId === anchor.traceId) return active;
  return api.setSpanContext(active, { traceId: anchor.traceId, spanId: anchor.spanId, traceFlags: 1, isRemote: true });
}
