import {
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_INVITE_REJECT,
  EV_EXPECTATION_VIOLATED,
  isChannelProtocolEvent,
  participantIds,
  type Envelope,
} from '@ag2net/protocol';
import type { HomeStores, HubPolicies } from '../partition/hub-parts.js';
import type { PartitionPick } from '../partition/partition.js';

/** What finding an envelope's recipients uses: its channel's participants and who is registered. */
export type RecipientDeps = Pick<HomeStores, 'registry'> & PartitionPick<'channels'>;

/**
 * Who receives an envelope: its recipients (`recipientsOf`) that the arbiter lets it reach. The arbiter (by default
 * each recipient's `inbound_from`, read now, so a rule tightened mid-channel applies at once) filters what agents
 * send; what the hub writes (channel protocol events, violation records) always reaches its audience. The hub's
 * arbiter is guarded (`guardArbiter`), so a throwing policy is a denial of that one recipient, never a retry.
 */
export async function allowedRecipients(
  ctx: RecipientDeps & Pick<HubPolicies, 'arbiter'>,
  envelope: Envelope,
): Promise<string[]> {
  const recipients = recipientsOf(ctx, envelope);
  const sender = ctx.registry.get(envelope.sender_id);
  if (sender === undefined || isHubWritten(envelope)) return recipients;
  const allowed: string[] = [];
  for (const id of recipients) {
    const recipient = ctx.registry.get(id);
    if (recipient === undefined) continue;
    if (id === envelope.sender_id) {
      allowed.push(id);
      continue;
    }
    const decision = await ctx.arbiter.authorizeDispatch({ envelope, sender, recipient });
    if (decision.allow) allowed.push(id);
  }
  return allowed;
}

/**
 * Who receives an envelope: its audience, or every participant but the sender for a broadcast; registered agents
 * only, each once. Invite acks and rejects go to nobody (AG2 does not dispatch them).
 */
export function recipientsOf(ctx: RecipientDeps, envelope: Envelope): string[] {
  if (envelope.event_type === EV_CHANNEL_INVITE_ACK || envelope.event_type === EV_CHANNEL_INVITE_REJECT) return [];
  let ids: readonly string[];
  if (envelope.audience !== null) ids = envelope.audience;
  else {
    const rt = ctx.partition.channels.get(envelope.channel_id);
    ids = rt === undefined ? [] : participantIds(rt.metadata).filter((id) => id !== envelope.sender_id);
  }
  return [...new Set(ids)].filter((id) => ctx.registry.get(id) !== undefined);
}

function isHubWritten(envelope: Envelope): boolean {
  return isChannelProtocolEvent(envelope.event_type) || envelope.event_type === EV_EXPECTATION_VIOLATED;
}
