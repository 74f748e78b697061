import type { ToolSpec } from './types.js';

/** The `say` tool: post a text envelope into the current channel (consulting and conversation offer it). */
export const SAY_TOOL: ToolSpec = Object.freeze({
  name: 'say',
  description:
    'Post a message into the current channel. Use it to speak before your turn ends; your final reply is posted too.',
  parameters: Object.freeze({
    type: 'object',
    properties: {
      content: { type: 'string', description: 'The message text.' },
      audience: {
        type: ['array', 'null'],
        items: { type: 'string' },
        description: 'Names of the participants who may see the message; omit for everyone in the channel.',
      },
      channel_id: {
        type: ['string', 'null'],
        description: 'The channel to post into; omit for the current channel.',
      },
    },
    required: ['content'],
    additionalProperties: false,
  }),
});
