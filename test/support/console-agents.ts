/** Handlers of the SDK agents the console's browser tests talk to. */
import { ackInvite, type AgentHandler } from '@ag2net/client';
import { EV_CHANNEL_INVITE, EV_TEXT } from '@ag2net/protocol';

/** Accepts every invite, and hands every other envelope that is not the agent's own to `handle`. */
export function acceptingInvites(handle: AgentHandler): AgentHandler {
  return async (envelope, client, context) => {
    if (envelope.event_type === EV_CHANNEL_INVITE) {
      await ackInvite(client, envelope);
      return;
    }
    if (envelope.sender_id === client.agentId) return;
    await handle(envelope, client, context);
  };
}

/**
 * Accepts invites and answers each text of another with `answer(text)`, caused by that text, once `ready` resolved
 * (default: at once).
 */
export function answeringTexts(
  answer: (text: string) => string,
  ready: Promise<void> = Promise.resolve(),
): AgentHandler {
  return acceptingInvites(async (envelope, client) => {
    if (envelope.event_type !== EV_TEXT) return;
    await ready;
    await client.send(envelope.channel_id, answer(String(envelope.event_data['text'])), {
      causationId: envelope.envelope_id,
    });
  });
}
