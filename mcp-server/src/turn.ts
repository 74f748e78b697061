import {
  createDefaultAdapterRegistry,
  whoseTurn as adapterTurn,
  type AdapterRegistry,
  type AdapterState,
} from '@ag2net/adapters';
import type { ChannelMetadata } from '@ag2net/protocol';

/** Whose turn it is in a channel, as the tools answer it: one participant, anyone (free chat), or nobody (and why). */
export type Turn =
  | { readonly kind: 'agent'; readonly agent_id: string }
  | { readonly kind: 'anyone' }
  | { readonly kind: 'none'; readonly why: string };

const DEFAULT_ADAPTERS = createDefaultAdapterRegistry();

/**
 * The next speaker as the channel's own adapter says it (`whoseTurn` of @ag2net/adapters), with the wire's field name:
 * a conversation expects anyone; an ended or pending channel, a state that could not be read (`null`) or an adapter
 * this server does not have is nobody, with why.
 */
export function whoseTurn(
  channel: ChannelMetadata,
  state: AdapterState | null,
  adapters: Pick<AdapterRegistry, 'find'> = DEFAULT_ADAPTERS,
): Turn {
  const turn = adapterTurn(channel, state, adapters);
  return turn.kind === 'agent' ? { kind: 'agent', agent_id: turn.agentId } : turn;
}
