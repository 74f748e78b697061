import type { HubRequestParsed } from '@ag2net/protocol/internal';
import { requireParticipant } from './channel-ops.js';
import type { HomeStores, HubEnv } from '../partition/hub-parts.js';
import type { PartitionPick } from '../partition/partition.js';
import { AuditKind } from '@ag2net/protocol';
import { agentFields, channelFields, shortReason } from '../base/log-names.js';

/** What recording a turn failure uses. */
export type TurnFailureDeps = Pick<HubEnv, 'logger'> &
  Pick<HomeStores, 'registry' | 'audit'> &
  PartitionPick<'channels'>;

/** AG2's `report_turn_failure`: a participant's turn on an envelope failed; recorded as `turn_failed`. */
export async function reportTurnFailure(
  ctx: TurnFailureDeps,
  callerId: string,
  req: HubRequestParsed<'reportTurnFailure'>,
): Promise<void> {
  ctx.registry.require(callerId);
  const rt = ctx.partition.channels.require(req.channel_id);
  requireParticipant(rt, callerId);
  // One short line: who, where, and why (the runner words a model failure by its reason, never the provider's text).
  ctx.logger.warn(
    {
      ...agentFields(ctx.registry, callerId),
      ...channelFields(rt.metadata),
      envelopeId: req.envelope_id,
      reason: shortReason(`${req.exc_type}: ${req.exc_message}`),
    },
    'turn failed',
  );
  await ctx.audit.record(AuditKind.TurnFailed, {
    channel_id: req.channel_id,
    agent_id: callerId,
    envelope_id: req.envelope_id,
    exc_type: req.exc_type,
    exc_message: req.exc_message,
  });
}
