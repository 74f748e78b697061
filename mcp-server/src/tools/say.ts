import { SayInputSchema } from './schemas.js';
import { resolveAgent } from './resolve.js';
import { defineTool, jsonOutput } from './tool.js';

/** AG2's `say`: posts a message into one of my channels, to everyone in it or to some of them. */
export const sayTool = defineTool({
  name: 'say',
  description:
    'Post a text message into one of your channels (channel_id from `channels`). The channel protocol decides ' +
    'whether it is your turn: a refused post comes back as protocol_error. Returns the admitted envelope id.',
  input: SayInputSchema,
  readOnly: false,
  async run(ctx, args) {
    const { participant } = ctx.session;
    // Read first: a channel I am not in, or that does not exist, is refused before anything is posted.
    const channel = await participant.getChannel(args.channel_id, { signal: ctx.signal });
    const audience =
      args.audience === undefined
        ? null
        : await Promise.all(args.audience.map(async (n) => (await resolveAgent(ctx, n)).agent_id));
    const envelopeId = await participant.send(channel.channel_id, args.text, { audience, signal: ctx.signal });
    return jsonOutput({ envelope_id: envelopeId, channel_id: channel.channel_id });
  },
});
