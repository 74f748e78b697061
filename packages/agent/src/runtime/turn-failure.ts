import type { AgentClient, Logger } from '@ag2net/client';
import { EV_TURN_FAILED, NetworkError, type Envelope, type TurnFailedData } from '@ag2net/protocol';
import { describeModelError } from '../model/limits.js';

/** `code` of an `ag2.turn.failed` whose cause is not the model (the hub, an adapter, a tool outside the model). */
export const TURN_ERROR_CODE = 'turn_error';

/**
 * Why a turn failed, as `ag2.turn.failed` says it: a model failure by its `ModelCallError` code and sentence, a
 * hub error by its wire code, anything else by its error name. Never the error's message, which for a model call
 * may quote the request (the prompt) or part of the key.
 */
export function describeTurnFailure(err: unknown): { code: string; reason: string } {
  const model = describeModelError(err);
  if (model !== null) return model;
  if (err instanceof NetworkError) return { code: TURN_ERROR_CODE, reason: `the hub refused the turn (${err.code})` };
  const name = err instanceof Error ? err.name : typeof err;
  return { code: TURN_ERROR_CODE, reason: `the turn failed (${name})` };
}

/** The id of an agent's failure notice for a trigger: the same on every attempt, so the hub admits one. */
export function turnFailedEnvelopeId(agentId: string, triggerEnvelopeId: string): string {
  return `f-${triggerEnvelopeId}-${agentId}`.slice(0, 128);
}

type FailingClient = Pick<AgentClient, 'agentId' | 'hub' | 'passport' | 'sendEnvelope'>;

/**
 * AG2's `_report_turn_failure`, and more: tells the channel (`ag2.turn.failed` to the trigger's audience and its
 * sender, `causation_id` = the trigger), logs one short line (`turn failed`: agent by name, channel, code, reason
 * — no prompt, no key, no stack) and reports the failure to the hub (`reportTurnFailure`, audited as
 * `turn_failed`). A failing notice or report is logged too. Never throws.
 */
export async function reportTurnFailure(
  client: FailingClient,
  envelope: Envelope,
  err: unknown,
  logger: Logger,
): Promise<void> {
  const { code, reason } = describeTurnFailure(err);
  const agent = client.passport.name;
  const context = { agent, channelId: envelope.channel_id, envelopeId: envelope.envelope_id };
  logger.error({ ...context, code, reason }, 'turn failed');
  const data: TurnFailedData = { agent_name: agent, reason, code };
  try {
    await client.sendEnvelope({
      envelope_id: turnFailedEnvelopeId(client.agentId, envelope.envelope_id),
      channel_id: envelope.channel_id,
      audience: audienceOf(envelope),
      causation_id: envelope.envelope_id,
      event_type: EV_TURN_FAILED,
      event_data: data,
    });
  } catch (noticeErr) {
    logger.warn({ ...context, code: errorCode(noticeErr) }, 'posting ag2.turn.failed failed');
  }
  try {
    await client.hub.call(
      'reportTurnFailure',
      {
        channel_id: envelope.channel_id,
        envelope_id: envelope.envelope_id,
        exc_type: err instanceof Error ? err.name : typeof err,
        // A model failure is worded by its reason: the provider's message may quote the key.
        exc_message: describeModelError(err) === null ? messageOf(err).slice(0, 4096) : reason,
      },
      { caller: client.agentId },
    );
  } catch (reportErr) {
    logger.warn({ ...context, code: errorCode(reportErr) }, 'reporting a failed turn failed');
  }
}

/** Whoever saw the trigger, and its sender: everyone when the trigger went to everyone. */
function audienceOf(trigger: Envelope): string[] | null {
  if (trigger.audience === null) return null;
  return [...new Set([...trigger.audience, trigger.sender_id])];
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function errorCode(err: unknown): string {
  return err instanceof NetworkError ? err.code : err instanceof Error ? err.name : typeof err;
}
