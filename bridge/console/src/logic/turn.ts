import { createDefaultAdapterRegistry, whoseTurn, type AdapterState, type Turn } from '@ag2net/adapters';
import type { ChannelMetadata, Envelope } from '@ag2net/protocol';

export type { Turn };

/** The protocols the console reads turns of: the hub's built-in four. */
const ADAPTERS = createDefaultAdapterRegistry();

/** Whose turn it is, as the channel's own adapter says it from `state` (`null`: the caller may not see it). */
export function channelTurn(channel: ChannelMetadata, state: AdapterState | null): Turn {
  return whoseTurn(channel, state, ADAPTERS);
}

/** The turn as the channel list and header say it: a name, `you`, `anyone`, or why nobody. */
export function turnLabel(turn: Turn, nameOf: (id: string) => string, me: string | null): string {
  switch (turn.kind) {
    case 'agent':
      return turn.agentId === me ? 'you' : nameOf(turn.agentId);
    case 'anyone':
      return 'anyone';
    case 'none':
      return `— (${turn.why})`;
  }
}

/**
 * The adapter state as read, caught up with the log: a state read just before the expected speaker's envelope
 * arrived would show the turn behind the transcript. When the log holds an envelope from the speaker the state
 * expects, after the envelope that gave them the turn, the envelopes from there on are folded into the state by the
 * channel's adapter. Any other state, or one of a protocol the console does not have, is returned as read.
 */
export function stateAfterLog(
  channel: ChannelMetadata,
  state: AdapterState | null,
  envelopes: readonly Envelope[],
): AdapterState | null {
  const adapter = ADAPTERS.find(channel.manifest.type, channel.manifest.version);
  if (state === null || adapter === undefined) return state;
  const next = adapter.expectedNext(channel, state);
  if (next === null) return state;
  const from =
    next.triggeringEnvelopeId === null
      ? 0
      : envelopes.findIndex((e) => e.envelope_id === next.triggeringEnvelopeId) + 1;
  // The trigger is not in the log as this person sees it: nothing to say which envelopes the state already holds.
  if (from === 0 && next.triggeringEnvelopeId !== null) return state;
  const unseen = envelopes.slice(from);
  if (!unseen.some((e) => e.sender_id === next.agentId)) return state;
  return unseen.reduce((folded, envelope) => adapter.fold(envelope, folded), state);
}
