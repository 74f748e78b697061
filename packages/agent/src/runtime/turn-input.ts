import type { ChannelAdapter } from '@ag2net/adapters';
import type { ChannelMetadata, Envelope } from '@ag2net/protocol';
import type { NameResolver, ViewPolicy } from '../views/types.js';

/** What `renderCurrentInput` needs besides the envelope. */
export interface CurrentInputOptions {
  readonly view: ViewPolicy;
  readonly adapter: Pick<ChannelAdapter, 'renderEnvelope' | 'extractTurnInput'>;
  readonly participantId: string;
  readonly channel: ChannelMetadata | null;
  readonly nameFor: NameResolver;
}

/**
 * AG2's `_render_current_input`: the trigger rendered through the view (so a named view prefixes it as it
 * prefixes history), falling back to the adapter's `extractTurnInput` when the view yields no text.
 */
export async function renderCurrentInput(envelope: Envelope, options: CurrentInputOptions): Promise<string | null> {
  const projected = await options.view.project([envelope], {
    participantId: options.participantId,
    channel: options.channel,
    renderEnvelope: (e) => options.adapter.renderEnvelope(e),
    nameFor: options.nameFor,
  });
  const first = projected[0];
  if (first !== undefined && (first.kind === 'request' || first.kind === 'message')) return first.text;
  return options.adapter.extractTurnInput(envelope);
}
