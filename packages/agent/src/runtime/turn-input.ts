import type { AgentAdapter } from '@ag2net/adapters';
import { ensureParts, type ChannelMetadata, type Envelope, type Part } from '@ag2net/protocol';
import type { NameResolver, ViewPolicy } from '../views/types.js';

/** What `renderCurrentInput` needs besides the envelope. */
export interface CurrentInputOptions {
  readonly view: ViewPolicy;
  readonly adapter: Pick<AgentAdapter, 'renderEnvelope' | 'extractTurnInput'>;
  readonly participantId: string;
  readonly channel: ChannelMetadata | null;
  readonly nameFor: NameResolver;
}

/**
 * AG2's `_render_current_input`: the trigger's parts (plain text as a string) rendered through the view (so a named view prefixes it as it
 * prefixes history), falling back to the adapter's `extractTurnInput` when the view yields none; `null` when neither
 * gives a part with content (an empty text part counts as none, as in AG2).
 */
export async function renderCurrentInput(
  envelope: Envelope,
  options: CurrentInputOptions,
): Promise<string | Part[] | null> {
  const projected = await options.view.project([envelope], {
    participantId: options.participantId,
    channel: options.channel,
    renderEnvelope: (e) => options.adapter.renderEnvelope(e),
    nameFor: options.nameFor,
  });
  const first = projected[0];
  if (first !== undefined && (first.kind === 'request' || first.kind === 'message')) {
    const parts = withContent(first.parts ?? ensureParts(first.text));
    if (parts.length > 0) return asInput(parts);
  }
  const parts = withContent(ensureParts(options.adapter.extractTurnInput(envelope)));
  return parts.length > 0 ? asInput(parts) : null;
}

/** One text part as its text (what `Agent.ask` takes for plain text), any other parts as they are. */
function asInput(parts: Part[]): string | Part[] {
  const only = parts[0];
  return parts.length === 1 && only?.kind === 'text' ? only.text : parts;
}

function withContent(parts: readonly Part[]): Part[] {
  return parts.filter((part) => part.kind !== 'text' || part.text !== '');
}
