import { isProtocolEvent, type Envelope } from '@ag2net/protocol';
import { showEnvelope } from '../transcript.js';
import { resolveAgent } from './resolve.js';
import { ContextInputSchema } from './schemas.js';
import { defineTool, jsonOutput, type ToolContext } from './tool.js';

/** The most envelopes `context` reads from a channel's log before filtering, newest kept. */
const MAX_READ = 1_000;

/** The envelopes of a channel I may see (the hub filters by audience), oldest first, after the last `MAX_READ`. */
export async function readTranscript(ctx: ToolContext, channelId: string): Promise<readonly Envelope[]> {
  const envelopes = await ctx.session.participant.readWal(channelId, {}, { signal: ctx.signal });
  return envelopes.slice(-MAX_READ);
}

/** AG2's `context`: what was said in one of my channels, filtered by text or speaker. */
export const contextTool = defineTool({
  name: 'context',
  description:
    "A channel's recent transcript as you may see it: the last `limit` messages, oldest first, optionally only " +
    'those holding `query` (any case) or sent by `speaker` (name or id). Channel events are left out.',
  input: ContextInputSchema,
  readOnly: true,
  async run(ctx, args) {
    // Metadata first: a channel I am not in is refused (access_denied, not_found) before its log is read.
    const channel = await ctx.session.participant.getChannel(args.channel_id, { signal: ctx.signal });
    const speakerId = args.speaker === undefined ? null : (await resolveAgent(ctx, args.speaker)).agent_id;
    const envelopes = (await readTranscript(ctx, channel.channel_id)).filter(
      (e) => !isProtocolEvent(e.event_type) && (speakerId === null || e.sender_id === speakerId),
    );
    await ctx.session.learnNames(
      envelopes.map((e) => e.sender_id),
      ctx.signal,
    );
    const needle = args.query?.toLowerCase();
    const shown = envelopes
      .map((e) => showEnvelope(e, ctx.session.nameOf))
      .filter((e) => needle === undefined || e.text.toLowerCase().includes(needle))
      .slice(-args.limit);
    return jsonOutput({ channel_id: channel.channel_id, state: channel.state, envelopes: shown });
  },
});
