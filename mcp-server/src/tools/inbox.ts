import { showEnvelope } from '../transcript.js';
import { InboxInputSchema } from './schemas.js';
import { defineTool, jsonOutput } from './tool.js';

/** What arrived for me since I last read: taken from the session's bounded inbox, oldest first. */
export const inboxTool = defineTool({
  name: 'inbox',
  description:
    'What arrived for you since you last read it (messages, invites, channel events), oldest first, at most ' +
    '`limit`; what is returned counts as read. `remaining` says how many are still unread, `dropped` how many were ' +
    'lost unread because too many piled up.',
  input: InboxInputSchema,
  readOnly: false,
  async run(ctx, args) {
    const { session } = ctx;
    const read = session.inbox.take({
      limit: args.limit,
      ...(args.channel_id === undefined ? {} : { channelId: args.channel_id }),
    });
    await session.learnNames(
      read.envelopes.map((e) => e.sender_id),
      ctx.signal,
    );
    return jsonOutput({
      envelopes: read.envelopes.map((e) => showEnvelope(e, session.nameOf)),
      remaining: read.remaining,
      dropped: read.dropped,
    });
  },
});
