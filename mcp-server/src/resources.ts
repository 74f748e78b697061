import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { IdSchema, isProtocolEvent } from '@ag2net/protocol';
import { toolErrorOf } from './errors.js';
import type { Logger } from './log.js';
import type { NetworkSession } from './session.js';
import { MAX_SCANNED_CHANNELS, newestFirst } from './tools/channels.js';
import { readTranscript } from './tools/context.js';
import { renderTranscript, showEnvelope } from './transcript.js';

/** The URI template of a channel's transcript. */
export const CHANNEL_URI_TEMPLATE = 'ag2net://channels/{channel_id}';
/** How many of my channels `resources/list` names. */
const LISTED_CHANNELS = 100;

/** The URI of a channel's transcript. */
export function channelUri(channelId: string): string {
  return `ag2net://channels/${channelId}`;
}

/** A failure of a resource request: the network's code first, as tool errors carry it. */
function resourceError(err: unknown, logger: Logger): McpError {
  const { code, text } = toolErrorOf(err);
  if (code === 'internal') logger.error({ err }, 'resource read failed');
  return new McpError(ErrorCode.InvalidParams, text);
}

/**
 * Registers the channel transcripts: `ag2net://channels/{channel_id}`, listed for my channels (newest first), read
 * as plain text lines `[time] sender: text` of what I may see in it.
 */
export function registerChannelResources(
  server: McpServer,
  deps: { readonly session: NetworkSession; readonly logger: Logger },
): void {
  const { session, logger } = deps;
  const template = new ResourceTemplate(CHANNEL_URI_TEMPLATE, {
    list: async (extra) => {
      try {
        const channels = newestFirst(
          await session.participant.listChannels({ limit: MAX_SCANNED_CHANNELS }, { signal: extra.signal }),
          LISTED_CHANNELS,
        );
        await session.learnNames(
          channels.flatMap((c) => c.participants.map((p) => p.agent_id)),
          extra.signal,
        );
        return {
          resources: channels.map((c) => ({
            uri: channelUri(c.channel_id),
            name: `${c.manifest.type} ${c.channel_id}`,
            description: `${c.state} ${c.manifest.type} with ${c.participants.map((p) => session.nameOf(p.agent_id)).join(', ')}`,
            mimeType: 'text/plain',
          })),
        };
      } catch (err) {
        throw resourceError(err, logger);
      }
    },
  });
  server.registerResource(
    'channel-transcript',
    template,
    {
      title: 'Channel transcript',
      description: 'What was said in one of your channels, as you may see it, oldest first.',
      mimeType: 'text/plain',
    },
    async (uri, variables, extra) => {
      const raw = variables['channel_id'];
      const parsed = IdSchema.safeParse(Array.isArray(raw) ? raw[0] : raw);
      if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, 'invalid_request: not a channel id');
      try {
        const ctx = { session, signal: extra.signal, logger };
        const channel = await session.participant.getChannel(parsed.data, { signal: extra.signal });
        const envelopes = (await readTranscript(ctx, channel.channel_id)).filter((e) => !isProtocolEvent(e.event_type));
        await session.learnNames(
          envelopes.map((e) => e.sender_id),
          extra.signal,
        );
        const header = `# ${channel.manifest.type} channel ${channel.channel_id} (${channel.state})`;
        const body = renderTranscript(envelopes.map((e) => showEnvelope(e, session.nameOf)));
        return {
          contents: [{ uri: uri.href, mimeType: 'text/plain', text: body === '' ? header : `${header}\n${body}` }],
        };
      } catch (err) {
        throw resourceError(err, logger);
      }
    },
  );
}
