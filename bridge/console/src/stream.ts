import { EnvelopeSchema, type Envelope } from '@ag2net/protocol';
import { ErrorBodySchema } from '../../src/api-schemas.js';

/** The envelope an SSE `envelope` event carries; `null` when its data is not one. */
export function envelopeOfEvent(event: Event): Envelope | null {
  if (!(event instanceof MessageEvent) || typeof event.data !== 'string') return null;
  try {
    const parsed = EnvelopeSchema.safeParse(JSON.parse(event.data));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** The error body an SSE `error` event carries (the stream failed after it started); `null` for a lost connection. */
export function streamError(
  event: Event,
): { code: string; message: string; details?: Record<string, unknown> | undefined } | null {
  if (!(event instanceof MessageEvent) || typeof event.data !== 'string') return null;
  try {
    const parsed = ErrorBodySchema.safeParse(JSON.parse(event.data));
    return parsed.success ? parsed.data.error : null;
  } catch {
    return null;
  }
}
