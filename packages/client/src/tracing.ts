import { contextForTrace as contextInTrace } from '@ag2net/protocol/internal';
import { SpanKind, SpanStatusCode, context, trace, type Context, type Tracer } from '@opentelemetry/api';
import { randomBytes } from 'node:crypto';

/** The client's tracer; its spans cost nothing until the application installs a tracer provider. */
function clientTracer(): Tracer {
  return trace.getTracer('@ag2net/client');
}

/** The context a span for an envelope of trace `traceId` starts in (`contextForTrace` of @ag2net/protocol/internal). */
export function contextForTrace(traceId: string | null | undefined): Context {
  return contextInTrace(traceId, context.active(), trace);
}

/**
 * The `trace_id` of an envelope about to be sent: its own when it has one; else the active span's trace (a reply
 * sent during a traced turn continues the trigger's trace); else a new random one, so that every conversation can
 * be followed across processes whether or not this process traces.
 */
export function traceIdFor(envelope: { readonly trace_id?: string | null | undefined }): string {
  if (typeof envelope.trace_id === 'string' && envelope.trace_id !== '') return envelope.trace_id;
  const active = trace.getSpanContext(context.active());
  if (active !== undefined && trace.isSpanContextValid(active)) return active.traceId;
  return randomBytes(16).toString('hex');
}

/**
 * Sends `envelope` (with its `trace_id` set by `traceIdFor`) through `post` inside a span `ag2net.send` (producer
 * kind) in the envelope's trace, naming the channel, the event type and, once admitted, the id and sequence.
 */
export async function tracedSend<
  E extends { readonly channel_id: string; readonly event_type: string; readonly trace_id?: string | null },
  R,
>(envelope: E, post: (stamped: E & { trace_id: string }) => Promise<R>): Promise<R> {
  const stamped = { ...envelope, trace_id: traceIdFor(envelope) };
  const span = clientTracer().startSpan(
    'ag2net.send',
    {
      kind: SpanKind.PRODUCER,
      attributes: { 'ag2net.channel_id': envelope.channel_id, 'ag2net.event_type': envelope.event_type },
    },
    contextForTrace(stamped.trace_id),
  );
  try {
    const ack = await context.with(trace.setSpan(context.active(), span), () => post(stamped));
    if (typeof ack === 'object' && ack !== null) {
      if ('envelope_id' in ack) span.setAttribute('ag2net.envelope_id', String(ack.envelope_id));
      if ('sequence' in ack && typeof ack.sequence === 'number') span.setAttribute('ag2net.sequence', ack.sequence);
    }
    return ack;
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
    throw err;
  } finally {
    span.end();
  }
}
