import { ChannelState } from '@ag2net/protocol';
import type { HubContext } from './core/context.js';
import { TTL_EXPIRED, beginCloseLocked } from './core/lifecycle.js';

/**
 * One sweeper pass at the clock's current time: pending channels whose invitees did not all ack within the ack
 * timeout close with `invite_timeout`; channels past `expires_at` end `expired` with `ttl_expired`.
 */
export async function sweep(ctx: HubContext): Promise<void> {
  const now = ctx.clock.now();
  for (const rt of ctx.channels.open()) {
    const m = rt.metadata;
    let reason: string | null = null;
    if (m.state === ChannelState.Pending && now - Date.parse(m.created_at) >= ctx.inviteAckTimeoutMs) {
      reason = 'invite_timeout';
    } else if (m.state !== ChannelState.Closing && m.expires_at !== null && Date.parse(m.expires_at) <= now) {
      reason = TTL_EXPIRED;
    }
    if (reason === null) continue;
    const why = reason;
    await ctx.serial.run(m.channel_id, () => beginCloseLocked(ctx, rt, why));
  }
}
