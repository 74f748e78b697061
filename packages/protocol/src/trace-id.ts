/**
 * Where an envelope's `trace_id` sits in an OpenTelemetry trace. Every process (sender, hub, runner) starts the
 * spans it makes for an envelope under the same remote parent: trace id = the `trace_id`, span id = its last 16
 * hex digits (its first 16 when those are all zero). No process exports that parent, so a trace viewer shows the
 * spans of all processes side by side under one trace; within a process, spans nest as usual.
 */
export interface TraceAnchor {
  /** 32 lowercase hex digits, not all zero. */
  readonly traceId: string;
  /** 16 lowercase hex digits, not all zero. */
  readonly spanId: string;
}

const TRACE_ID = /^[0-9a-f]{32}$/;
const ZEROS = /^0+$/;

/**
 * The anchor of a `trace_id` in W3C form (32 hex digits; a UUID's dashes are dropped), or `null` for a missing or
 * foreign one: spans for such an envelope start a trace of their own.
 */
export function traceAnchorOf(traceId: string | null | undefined): TraceAnchor | null {
  if (traceId === null || traceId === undefined) return null;
  const id = traceId.toLowerCase().replaceAll('-', '');
  if (!TRACE_ID.test(id) || ZEROS.test(id)) return null;
  const tail = id.slice(16);
  return { traceId: id, spanId: ZEROS.test(tail) ? id.slice(0, 16) : tail };
}
