import type { Envelope } from '@ag2net/protocol';
import { SpanKind, context, trace } from '@opentelemetry/api';
import type { HubEnv } from '../partition/hub-parts.js';
import { notify } from '../observe/observer.js';
import { contextForTrace, hubTracer, tracingEnabled } from '../observe/trace.js';

/**
 * Runs one envelope's fan-out in a span `ag2net.deliver` (producer kind, in the envelope's trace) and, when it is
 * done, tells the observer with the delivery lag: the time since the envelope was admitted. `deliver` resolves
 * true when done, false when the hub stopped first (nothing is reported then: the next active hub delivers it).
 */
export async function observedDelivery(
  ctx: Pick<HubEnv, 'observer' | 'logger' | 'clock'>,
  envelope: Envelope,
  deliver: () => Promise<boolean>,
): Promise<boolean> {
  if (!tracingEnabled()) {
    const done = await deliver();
    if (done) reportDelivered(ctx, envelope);
    return done;
  }
  const span = hubTracer().startSpan(
    'ag2net.deliver',
    {
      kind: SpanKind.PRODUCER,
      attributes: {
        'ag2net.channel_id': envelope.channel_id,
        'ag2net.envelope_id': envelope.envelope_id,
        'ag2net.event_type': envelope.event_type,
        ...(envelope.sequence === undefined ? {} : { 'ag2net.sequence': envelope.sequence }),
      },
    },
    contextForTrace(envelope.trace_id),
  );
  try {
    const done = await context.with(trace.setSpan(context.active(), span), deliver);
    span.setAttribute('ag2net.delivered', done);
    if (done) reportDelivered(ctx, envelope);
    return done;
  } finally {
    span.end();
  }
}

/** Tells the observer, if it listens, that the envelope's fan-out is done and how long after its admission. */
function reportDelivered(ctx: Pick<HubEnv, 'observer' | 'logger' | 'clock'>, envelope: Envelope): void {
  const { delivered } = ctx.observer;
  if (delivered === undefined) return;
  const admittedAt = Date.parse(envelope.created_at);
  const lagMs = Number.isNaN(admittedAt) ? 0 : Math.max(0, ctx.clock.now() - admittedAt);
  notify(ctx.logger, () => delivered({ envelope, lagMs }));
}
