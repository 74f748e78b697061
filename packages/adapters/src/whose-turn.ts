import { ChannelState, type ChannelMetadata } from '@ag2net/protocol';
import { CONSULTING_TYPE } from './consulting.js';
import { CONVERSATION_TYPE } from './conversation.js';
import type { AdapterLookup, AdapterState, HubAdapter } from './types.js';
import { WORKFLOW_TYPE } from './workflow/manifest.js';

/** Whose turn it is in a channel: one participant, anyone (free chat), or nobody (and why, in a word or two). */
export type Turn =
  | { readonly kind: 'agent'; readonly agentId: string }
  | { readonly kind: 'anyone' }
  | { readonly kind: 'none'; readonly why: string };

/** Why nobody is expected in an active channel whose adapter names nobody, per channel type. */
const NOBODY: Readonly<Record<string, string>> = { [CONSULTING_TYPE]: 'answered', [WORKFLOW_TYPE]: 'finished' };

/**
 * The next speaker as the channel's own adapter says it (`expectedNext` over its state), so that every reader names
 * the turn the way the hub enforces it. A conversation expects nobody in particular: anyone. An ended or pending
 * channel, a state the caller could not read (`null`) or a protocol `adapters` does not have: nobody, with why.
 */
export function whoseTurn(
  channel: ChannelMetadata,
  state: AdapterState | null,
  adapters: Pick<AdapterLookup<HubAdapter>, 'find'>,
): Turn {
  switch (channel.state) {
    case ChannelState.Closing:
    case ChannelState.Closed:
    case ChannelState.Expired:
      return { kind: 'none', why: channel.state };
    case ChannelState.Pending:
      return { kind: 'none', why: 'waiting for invitees' };
    case ChannelState.Active:
      break;
    default: {
      const unknown: never = channel.state;
      return { kind: 'none', why: String(unknown) };
    }
  }
  const adapter = adapters.find(channel.manifest.type, channel.manifest.version);
  if (adapter === undefined) return { kind: 'none', why: 'unknown protocol' };
  if (channel.manifest.type === CONVERSATION_TYPE) return { kind: 'anyone' };
  if (state === null) return { kind: 'none', why: 'unknown' };
  const next = adapter.expectedNext(channel, state);
  if (next !== null) return { kind: 'agent', agentId: next.agentId };
  return { kind: 'none', why: NOBODY[channel.manifest.type] ?? 'nobody' };
}
