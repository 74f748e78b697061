import type { ChannelMetadata, Passport } from '@ag2net/protocol';

/** What `agentFields` reads of the agent registry (`AgentRegistry.get`): an agent's passport by id. */
export interface AgentLookup {
  get(agentId: string): { readonly passport: Pick<Passport, 'name'> } | undefined;
}

/**
 * How log lines name a channel beside its id: its `name` label when it has one, else its type (`consulting`). The
 * runner's lines use the same rule (`channelLabel` in @ag2net/agent).
 */
export function channelLabel(metadata: Pick<ChannelMetadata, 'labels' | 'manifest'>): string {
  return metadata.labels['name'] ?? metadata.manifest.type;
}

/** The fields a log line names a channel with: `{ channel, channelId }`. */
export function channelFields(metadata: Pick<ChannelMetadata, 'channel_id' | 'labels' | 'manifest'>): {
  channel: string;
  channelId: string;
} {
  return { channel: channelLabel(metadata), channelId: metadata.channel_id };
}

/** The fields a log line names an agent with: `{ agent, agentId }` (`agent` is null for an id not registered). */
export function agentFields(registry: AgentLookup, agentId: string): { agent: string | null; agentId: string } {
  return { agent: registry.get(agentId)?.passport.name ?? null, agentId };
}

/** The first line of `text`, at most `max` characters: a reason short enough for one log line. */
export function shortReason(text: string, max = 160): string {
  const first = text.split('\n', 1)[0] ?? '';
  return first.length > max ? `${first.slice(0, max - 1)}…` : first;
}
