import {
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_EXPIRED,
  EV_CHANNEL_INVITE_REJECT,
  EV_TEXT,
  EV_TURN_FAILED,
  type Envelope,
} from '@ag2net/protocol';
import { ToolErrorCode, ToolFailure } from '../errors.js';
import { envelopeText } from '../transcript.js';
import { resolveAgent } from './resolve.js';
import { DEFAULT_DELEGATE_TIMEOUT_S, DelegateInputSchema } from './schemas.js';
import { defineTool, type ToolOutput } from './tool.js';

const ENDED = new Set<string>([EV_CHANNEL_CLOSED, EV_CHANNEL_EXPIRED, EV_CHANNEL_INVITE_REJECT]);

/**
 * AG2's `delegate`: opens a consulting channel with another agent, asks, and returns its answer's text. The channel
 * ending first, the agent's turn failing or the wait running out come back as tool errors.
 */
export const delegateTool = defineTool({
  name: 'delegate',
  description:
    'Ask another agent (by name) one question in a new consulting channel and wait for its answer, which is ' +
    'returned as text. Fails with not_found for an unknown agent, timeout when no answer came within timeout_s.',
  input: DelegateInputSchema,
  readOnly: false,
  async run(ctx, args): Promise<ToolOutput> {
    const { participant } = ctx.session;
    const target = await resolveAgent(ctx, args.target);
    if (target.agent_id === participant.agentId) {
      throw new ToolFailure(ToolErrorCode.InvalidRequest, 'cannot delegate to yourself');
    }
    const channel = await participant.open({
      type: 'consulting',
      target: target.agent_id,
      ...(args.capability === undefined ? {} : { knobs: { capability: args.capability } }),
      signal: ctx.signal,
    });
    // Subscribed before the prompt goes out, so that the answer cannot arrive unseen.
    const answers = participant.subscribe({
      channelId: channel.channelId,
      predicate: (e) =>
        ENDED.has(e.event_type) ||
        (e.sender_id === target.agent_id && (e.event_type === EV_TEXT || e.event_type === EV_TURN_FAILED)),
    });
    let answer: Envelope | null;
    try {
      await participant.send(channel.channelId, args.prompt, { audience: [target.agent_id], signal: ctx.signal });
      const timeoutS = args.timeout_s ?? DEFAULT_DELEGATE_TIMEOUT_S;
      answer = await answers.receive({ timeout: Math.round(timeoutS * 1000), signal: ctx.signal });
    } finally {
      answers.close();
    }
    if (answer === null) throw new ToolFailure(ToolErrorCode.Closed, 'this identity disconnected while waiting');
    if (answer.event_type === EV_TEXT) {
      const text = answer.event_data['text'];
      return { text: typeof text === 'string' ? text : JSON.stringify(text) };
    }
    throw new ToolFailure(
      ToolErrorCode.ProtocolError,
      `${target.name} did not answer in channel ${channel.channelId}: ${envelopeText(answer, 400)}`,
    );
  },
});
