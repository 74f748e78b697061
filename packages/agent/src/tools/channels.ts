import type { Channel } from '@ag2net/client';
import { repr } from '@ag2net/protocol/internal';
import { AccessDeniedError, CloseReason, isTerminalChannelState, type ChannelMetadata } from '@ag2net/protocol';
import type { ToolContext } from './context.js';
import { message } from './format.js';

/** Arguments of `channels`. */
export interface ChannelsArgs {
  readonly action: 'list' | 'open' | 'info' | 'close';
  readonly type?: string | null;
  readonly target?: string | readonly string[] | null;
  readonly knobs?: Record<string, unknown> | null;
  readonly intent?: string | null;
  readonly ttl?: string | number | null;
  /** For `open`: sent as the first text once the channel is active. */
  readonly message?: string | null;
  readonly channel_id?: string | null;
  /** For `list`: `active` (default) leaves out closed and expired channels. */
  readonly state?: 'active' | 'all' | null;
}

/** How many channels `list` returns at most (AG2's `list_channels` default). */
const LIST_LIMIT = 50;

/**
 * AG2's `channels`: `list` the caller's channels, `open` one (optionally seeding it with `message`; a failed
 * seed closes it again with `seed_failed`), `info` on a channel the caller participates in, `close` the current
 * or given channel (`closed_by_agent`). Failures are `Error: …` strings.
 */
export async function channels(
  ctx: ToolContext,
  args: ChannelsArgs,
): Promise<Record<string, unknown>[] | Record<string, unknown> | string> {
  const { client } = ctx;
  switch (args.action) {
    case 'list': {
      const all = await client.listChannels({ agent_id: client.agentId, limit: LIST_LIMIT * 4 });
      const kept = args.state === 'all' ? all : all.filter((m) => !isTerminalChannelState(m.state));
      return kept.slice(0, LIST_LIMIT).map((m) => ({
        channel_id: m.channel_id,
        type: m.manifest.type,
        state: m.state,
        participants: m.participants.map((p) => p.agent_id),
      }));
    }
    case 'open': {
      const target = typeof args.target === 'string' ? args.target : args.target ? [...args.target] : [];
      if (!args.type || target.length === 0) return 'Error: open requires `type` and `target`';
      let channel: Channel;
      try {
        channel = await client.open({
          type: args.type,
          target,
          ...(args.knobs ? { knobs: args.knobs } : {}),
          ...(args.intent ? { intent: args.intent } : {}),
          ...(args.ttl !== undefined && args.ttl !== null ? { ttl: args.ttl } : {}),
        });
      } catch (err) {
        return `Error: open failed: ${message(err)}`;
      }
      let seed: string | null = null;
      if (args.message) {
        try {
          seed = await channel.send(args.message);
        } catch (err) {
          await client.closeChannel(channel.channelId, CloseReason.SeedFailed).catch(() => undefined);
          return `Error: seed send failed: ${message(err)}`;
        }
      }
      return {
        channel_id: channel.channelId,
        type: args.type,
        participants: channel.metadata.participants.map((p) => p.agent_id),
        ...(seed === null ? {} : { seed_envelope_id: seed }),
      };
    }
    case 'info': {
      if (!args.channel_id) return 'Error: info requires `channel_id`';
      let metadata: ChannelMetadata;
      try {
        metadata = await client.getChannel(args.channel_id);
      } catch (err) {
        // The hub shows a channel only to its participants.
        if (err instanceof AccessDeniedError) return `Error: not a participant of channel ${repr(args.channel_id)}`;
        return `Error: channel ${repr(args.channel_id)} not found`;
      }
      if (!metadata.participants.some((p) => p.agent_id === client.agentId)) {
        return `Error: not a participant of channel ${repr(args.channel_id)}`;
      }
      return metadataDict(metadata);
    }
    case 'close': {
      const channelId = args.channel_id || ctx.channel?.channel_id;
      if (!channelId) return 'Error: close requires `channel_id` or an active channel';
      let closed: ChannelMetadata;
      try {
        closed = await client.closeChannel(channelId, CloseReason.ClosedByAgent);
      } catch (err) {
        return `Error: close failed: ${message(err)}`;
      }
      return { channel_id: channelId, state: closed.state, close_reason: closed.close_reason };
    }
    default:
      return unknownAction(args.action);
  }
}

/** AG2's `_metadata_dict`: the metadata an LLM may read, expectations included. */
function metadataDict(m: ChannelMetadata): Record<string, unknown> {
  return {
    channel_id: m.channel_id,
    type: m.manifest.type,
    version: m.manifest.version,
    state: m.state,
    creator_id: m.creator_id,
    participants: m.participants.map((p) => ({ agent_id: p.agent_id, role: p.role, order: p.order })),
    knobs: { ...m.knobs },
    labels: { ...m.labels },
    expectations: m.manifest.expectations.map((e) => ({
      name: e.name,
      on_violation: e.on_violation,
      params: { ...e.params },
    })),
    created_at: m.created_at,
    expires_at: m.expires_at,
    closed_at: m.closed_at,
    close_reason: m.close_reason,
  };
}

function unknownAction(action: never): string {
  return `Error: unknown action ${repr(action)}; choose from list, open, info, close`;
}
