import type { HubRequestParsed } from '@ag2net/protocol/internal';
import { requireParticipant } from '../core/channel-ops.js';
import type { HubContext } from '../core/context.js';
import { AuditKind } from '@ag2net/protocol';

/** AG2's `report_turn_failure`: a participant's turn on an envelope failed; recorded as `turn_failed`. */
export async function reportTurnFailure(
  ctx: HubContext,
  callerId: string,
  req: HubRequestParsed<'reportTurnFailure'>,
): Promise<void> {
  ctx.registry.require(callerId);
  requireParticipant(ctx.channels.require(req.channel_id), callerId);
  ctx.logger.warn({ channelId: req.channel_id, agentId: callerId, envelopeId: req.envelope_id }, 'turn failed');
  await ctx.audit.record(AuditKind.TurnFailed, {
    channel_id: req.channel_id,
    agent_id: callerId,
    envelope_id: req.envelope_id,
    exc_type: req.exc_type,
    exc_message: req.exc_message,
  });
}
