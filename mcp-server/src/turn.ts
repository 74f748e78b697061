import { createDefaultAdapterRegistry, type AdapterRegistry, type AdapterState } from '@ag2net/adapters';
import type { ChannelMetadata } from '@ag2net/protocol';

/** Whose turn it is in a channel: one participant, anyone (free chat), or nobody (and why). */
export type Turn =
  | { readonly kind: 'agent'; readonly agent_id: string }
  | { readonly kind: 'anyone' }
  | { readonly kind: 'none'; readonly why: string };

const ENDED = new Set(['closing', 'closed', 'expired']);

/** Why nobody is expected in an active channel whose adapter names nobody, per channel type. */
const NOBODY: Readonly<Record<string, string>> = { consulting: 'answered', workflow: 'finished' };

const DEFAULT_ADAPTERS = createDefaultAdapterRegistry();

/**
 * The next speaker as the channel's own adapter says it (`expectedNext` over its state), so that this reads every
 * protocol the way the hub enforces it: a conversation expects nobody in particular (anyone); an ended or pending
 * channel, a state that could not be read (`null`) or an adapter this server does not have is nobody, with why.
 */
export function whoseTurn(
  channel: ChannelMetadata,
  state: AdapterState | null,
  adapters: AdapterRegistry = DEFAULT_ADAPTERS,
): Turn {
  if (ENDED.has(channel.state)) return { kind: 'none', why: channel.state };
  if (channel.state === 'pending') return { kind: 'none', why: 'waiting for invitees' };
  const adapter = adapters.find(channel.manifest.type, channel.manifest.version);
  if (adapter === undefined) return { kind: 'none', why: 'unknown protocol' };
  if (channel.manifest.type === 'conversation') return { kind: 'anyone' };
  if (state === null) return { kind: 'none', why: 'unknown' };
  const next = adapter.expectedNext(channel, state);
  if (next !== null) return { kind: 'agent', agent_id: next.agentId };
  return { kind: 'none', why: NOBODY[channel.manifest.type] ?? 'nobody' };
}
