import type { ChannelMetadata, Envelope, Rule } from '@ag2net/protocol';
import { agentFields, channelFields } from '../base/log-names.js';
import { deniedError } from '../governance/arbiter.js';
import { highWaterMark } from '../governance/inbox-counters.js';
import type { HomeStores, HubEnv, HubPolicies } from '../partition/hub-parts.js';

/** What reading an agent's inbox depth uses: the hub's estimate, and the inbox consumer when it runs high. */
export type InboxDepthDeps = Pick<HubEnv, 'jsm' | 'names' | 'logger'> &
  Pick<HomeStores, 'registry'> &
  Pick<HubPolicies, 'inboxes'>;

/**
 * An agent's pending count as admission checks it (`InboxCounters.pending`): the hub's estimate while it is under
 * the agent's high-water mark, else what the agent's inbox consumer holds now (`num_pending + num_ack_pending`,
 * i.e. delivered and not yet acked). An agent without a `max_pending` cap is never looked up. When the consumer's
 * count reaches the high-water mark the hub logs `inbox pressure` once, naming the agent and the channel whose post
 * found it, until a check finds the inbox under the mark again.
 */
export async function inboxPending(
  ctx: InboxDepthDeps,
  recipient: { readonly agentId: string; readonly rule: Rule },
  channel: Pick<ChannelMetadata, 'channel_id' | 'labels' | 'manifest'>,
): Promise<number> {
  const { agentId, rule } = recipient;
  const { max_pending: maxPending, high_water: highWater } = rule.limits.inbox;
  const mark = maxPending > 0 ? highWaterMark(maxPending, highWater) : Infinity;
  // With several partitions each counts only its own admissions: it asks the consumer (which holds them all) once
  // its own share reaches the mark divided among the partitions, so that together they never pass it unseen.
  const { partitions } = ctx.names;
  const refreshAt = Math.min(maxPending > 0 ? maxPending : Infinity, mark);
  const { pending, pressureStarted } = await ctx.inboxes.pending(
    agentId,
    {
      refreshAt: partitions === 1 ? refreshAt : Math.max(1, Math.floor(refreshAt / partitions)),
      highWater: mark,
      shared: partitions > 1,
    },
    async (id) => {
      const info = await ctx.jsm.consumers.info(ctx.names.inboxStream, ctx.names.inboxConsumer(id));
      return info.num_pending + info.num_ack_pending;
    },
  );
  if (pressureStarted) {
    ctx.logger.warn(
      { ...agentFields(ctx.registry, agentId), ...channelFields(channel), pending, highWater: mark, maxPending },
      'inbox pressure',
    );
  }
  return pending;
}

/**
 * Invites count toward `max_pending` like content: before a channel is created, each invite it will send passes the
 * arbiter's inbox check against the invitee's pending count, so a full inbox refuses new channels (`inbox_full`) as
 * it refuses content, and invites cannot be used to flood an inbox.
 */
export async function checkInviteInboxes(
  ctx: InboxDepthDeps & Pick<HubPolicies, 'arbiter'>,
  channel: ChannelMetadata,
  invites: readonly Envelope[],
): Promise<void> {
  for (const envelope of invites) {
    for (const id of envelope.audience ?? []) {
      const recipient = ctx.registry.get(id);
      if (recipient === undefined) continue;
      const pending = await inboxPending(ctx, { agentId: id, rule: recipient.rule }, channel);
      const decision = await ctx.arbiter.authorizeInbox({ envelope, recipient, pending });
      if (!decision.allow) throw deniedError(decision);
    }
  }
}
