import { describe, expect, it } from 'vitest';
import { contextForTrace, type RemoteSpanContext, type SpanContextApi } from './trace-context.js';

/** A context is the span context set on it, or none. */
type Ctx = { readonly span?: RemoteSpanContext | { readonly traceId: string } };
const api: SpanContextApi<Ctx> = {
  getSpanContext: (ctx) => ctx.span,
  setSpanContext: (ctx, span) => ({ ...ctx, span }),
};
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('contextForTrace', () => {
  it("parents a span on the trace's anchor: its last 16 hex digits, sampled and remote", () => {
    expect(contextForTrace(TRACE, {}, api)).toEqual({
      span: { traceId: TRACE, spanId: 'a3ce929d0e0e4736', traceFlags: 1, isRemote: true },
    });
  });

  it('keeps the active context when it belongs to the trace already, or the trace id is missing or foreign', () => {
    const inTrace: Ctx = { span: { traceId: TRACE } };
    expect(contextForTrace(TRACE, inTrace, api)).toBe(inTrace);
    const active: Ctx = {};
    expect(contextForTrace(null, active, api)).toBe(active);
    expect(contextForTrace('not-a-trace', active, api)).toBe(active);
  });
});
