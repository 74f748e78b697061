/**
 * What other ag2net packages (the agent runtime) share with the client but users must not rely on: how a turn's span
 * joins the trace of the envelope that started it.
 *
 * @example
 * ```ts
 * import { contextForTrace } from '@ag2net/client/internal';
 *
 * const span = tracer.startSpan('ag2net.turn', { kind: SpanKind.CONSUMER }, contextForTrace(trigger.trace_id));
 * ```
 */
export { contextForTrace } from './tracing.js';
