import type { Participant } from '@ag2net/protocol';
import type { ChannelPreview } from '../../../src/api-schemas.js';
import { channelLabel, type ChannelNaming } from './ids.js';

/** The words a search looks for: lower-case, split on white space. */
export function searchTerms(query: string): string[] {
  return query
    .toLowerCase()
    .split(/\s+/)
    .filter((t) => t !== '');
}

/**
 * Whether a channel matches every term of a search (case-insensitive, anywhere in a word): its name (the intent, or
 * its type and id), its type, its id, its participants' names and its last message's words and sender. No terms match
 * every channel.
 */
export function channelMatches(
  channel: ChannelNaming & { readonly participants: readonly Pick<Participant, 'agent_id'>[] },
  terms: readonly string[],
  context: { readonly nameOf: (id: string) => string; readonly preview: ChannelPreview | undefined },
): boolean {
  if (terms.length === 0) return true;
  const message = context.preview?.last_message ?? null;
  const haystack = [
    channelLabel(channel),
    channel.manifest.type,
    channel.channel_id,
    ...channel.participants.map((p) => context.nameOf(p.agent_id)),
    message === null ? '' : `${context.nameOf(message.sender_id)} ${message.text}`,
  ]
    .join('\n')
    .toLowerCase();
  return terms.every((t) => haystack.includes(t));
}
