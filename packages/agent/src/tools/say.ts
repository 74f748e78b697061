import { repr } from '@ag2net/protocol/internal';
import type { ChannelMetadata } from '@ag2net/protocol';
import type { ToolContext } from './context.js';
import { message } from './format.js';

/** Arguments of `say`. */
export interface SayArgs {
  readonly content: string;
  /** Peer names; `null`/absent broadcasts within the channel. */
  readonly audience?: readonly string[] | null;
  /** Used only outside a turn, when there is no current channel. */
  readonly channel_id?: string | null;
}

/**
 * AG2's `say`: posts a text envelope, built by the channel's adapter, into the current channel (or `channel_id`
 * when there is none). Returns `posted envelope <id>` or an `Error: …` string; never throws.
 */
export async function say(ctx: ToolContext, args: SayArgs): Promise<string> {
  const { client } = ctx;
  let channel: ChannelMetadata | null = ctx.channel;
  if (channel === null) {
    if (args.channel_id === undefined || args.channel_id === null) {
      return 'Error: no current channel and no channel_id provided';
    }
    try {
      channel = await client.getChannel(args.channel_id);
    } catch (err) {
      return `Error: channel ${repr(args.channel_id)} not found: ${message(err)}`;
    }
  }
  let audience: string[] | null = null;
  if (args.audience !== undefined && args.audience !== null) {
    audience = [];
    for (const name of args.audience) {
      let id: string | null;
      try {
        id = (await client.hub.getAgent(name)).agent_id;
      } catch {
        return `Error: peer ${repr(name)} not found`;
      }
      if (id === null) return `Error: peer ${repr(name)} has no agent_id`;
      audience.push(id);
    }
  }
  let envelope;
  try {
    const adapter = ctx.adapters.get(channel.manifest.type, channel.manifest.version);
    envelope = adapter.buildTextEnvelope(channel.channel_id, client.agentId, { text: args.content, audience });
  } catch (err) {
    return `Error: adapter unavailable for channel ${repr(channel.channel_id)}: ${message(err)}`;
  }
  try {
    const ack = await client.sendEnvelope(envelope);
    return `posted envelope ${ack.envelope_id}`;
  } catch (err) {
    return `Error: send failed: ${message(err)}`;
  }
}
