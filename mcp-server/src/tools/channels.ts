import type { ChannelMetadata } from '@ag2net/protocol';
import { ToolErrorCode, ToolFailure } from '../errors.js';
import type { NetworkSession } from '../session.js';
import { whoseTurn, type Turn } from '../turn.js';
import { ChannelsInputSchema } from './schemas.js';
import { defineTool, jsonOutput, type ToolContext } from './tool.js';

/** Most channels a listing reads from the hub, which answers them oldest first. */
export const MAX_SCANNED_CHANNELS = 1_000;

/** The newest `limit` of `channels` (given in creation order), newest first. */
export function newestFirst(channels: readonly ChannelMetadata[], limit: number): ChannelMetadata[] {
  return channels.slice(-limit).reverse();
}

/** The turn as a model reads it: `you`, a name, `anyone`, or `nobody (why)`. */
function turnLabel(turn: Turn, session: NetworkSession): string {
  switch (turn.kind) {
    case 'agent':
      return turn.agent_id === session.participant.agentId ? 'you' : session.nameOf(turn.agent_id);
    case 'anyone':
      return 'anyone';
    case 'none':
      return `nobody (${turn.why})`;
    default: {
      const never: never = turn;
      return String(never);
    }
  }
}

async function stateOf(ctx: ToolContext, channel: ChannelMetadata): Promise<Record<string, unknown> | null> {
  if (channel.state !== 'active') return null;
  try {
    return await ctx.session.participant.adapterState(channel.channel_id, { signal: ctx.signal });
  } catch {
    // A state that cannot be read (history expired, the channel ended meanwhile) shows as an unknown turn.
    return null;
  }
}

/** One channel as `channels` shows it, with whose turn it is. */
export async function describeChannel(ctx: ToolContext, channel: ChannelMetadata): Promise<Record<string, unknown>> {
  const { session } = ctx;
  const turn = whoseTurn(channel, await stateOf(ctx, channel));
  return {
    channel_id: channel.channel_id,
    type: channel.manifest.type,
    state: channel.state,
    intent: channel.labels['intent'] ?? null,
    participants: channel.participants.map((p) => ({
      agent_id: p.agent_id,
      name: session.nameOf(p.agent_id),
      role: p.role,
    })),
    creator: session.nameOf(channel.creator_id),
    turn: turnLabel(turn, session),
    created_at: channel.created_at,
    ...(channel.close_reason === '' ? {} : { close_reason: channel.close_reason }),
  };
}

/** AG2's `channels`: my channels with their state, type, participants and whose turn it is; open and close. */
export const channelsTool = defineTool({
  name: 'channels',
  description:
    'Your channels. list (default): id, type, state, participants and whose turn it is (`you`, a name, `anyone` or ' +
    '`nobody`), newest first; state filters (default active), channel_id shows one. open: type, target, intent?, message? → the ' +
    'new channel once every invitee accepted. close: channel_id, reason?.',
  input: ChannelsInputSchema,
  readOnly: false,
  async run(ctx, args) {
    const { participant } = ctx.session;
    if (args.action === 'open') {
      if (args.type === undefined || args.target === undefined) {
        throw new ToolFailure(ToolErrorCode.InvalidRequest, 'open needs type and target');
      }
      const channel = await participant.open({
        type: args.type,
        target: args.target,
        ...(args.intent === undefined ? {} : { intent: args.intent }),
        signal: ctx.signal,
      });
      const seed =
        args.message === undefined
          ? null
          : await participant.send(channel.channelId, args.message, { signal: ctx.signal });
      const opened = await participant.getChannel(channel.channelId, { signal: ctx.signal });
      await ctx.session.learnNames(
        opened.participants.map((p) => p.agent_id),
        ctx.signal,
      );
      return jsonOutput({ channel: await describeChannel(ctx, opened), seed_envelope_id: seed });
    }
    if (args.action === 'close') {
      if (args.channel_id === undefined) throw new ToolFailure(ToolErrorCode.InvalidRequest, 'close needs channel_id');
      const closed = await participant.closeChannel(args.channel_id, args.reason ?? 'closed_by_agent', {
        signal: ctx.signal,
      });
      return jsonOutput({ channel_id: closed.channel_id, state: closed.state, close_reason: closed.close_reason });
    }
    const channels =
      args.channel_id !== undefined
        ? [await participant.getChannel(args.channel_id, { signal: ctx.signal })]
        : newestFirst(
            await participant.listChannels(
              { state: args.state === 'all' ? null : args.state, limit: MAX_SCANNED_CHANNELS },
              { signal: ctx.signal },
            ),
            args.limit,
          );
    await ctx.session.learnNames(
      channels.flatMap((c) => [c.creator_id, ...c.participants.map((p) => p.agent_id)]),
      ctx.signal,
    );
    return jsonOutput({ channels: await Promise.all(channels.map((c) => describeChannel(ctx, c))) });
  },
});
