import { violationRecordOf } from '@ag2net/protocol/internal';
import {
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_EXPIRED,
  ChannelEndDataSchema,
  participantIds,
  type Envelope,
} from '@ag2net/protocol';
import type { HomeStores } from '../partition/hub-parts.js';
import type { PartitionPick } from '../partition/partition.js';
import { AuditKind } from '@ag2net/protocol';

/** What writing a WAL envelope's audit records uses. */
export type WalAuditDeps = Pick<HomeStores, 'audit'> & PartitionPick<'channels'>;

/**
 * The audit records a WAL envelope implies, written by the delivery consumer so that none is lost to a crash (the
 * consumer redelivers until it acks) and none is stored twice (ids derived from the channel and envelope):
 * - a channel's first envelope → `channel_created`;
 * - `ag2.channel.closed` / `ag2.channel.expired` → `channel_closed` / `channel_expired`;
 * - the hub's `ag2.expectation.violated` record → `expectation_violated`.
 */
export async function auditFromWal(ctx: WalAuditDeps, envelope: Envelope): Promise<void> {
  const rt = ctx.partition.channels.get(envelope.channel_id);
  if (rt === undefined) return;
  const channelId = envelope.channel_id;
  if (envelope.sequence === 1) {
    const m = rt.metadata;
    await ctx.audit.record(
      AuditKind.ChannelCreated,
      {
        channel_id: channelId,
        manifest_type: m.manifest.type,
        manifest_version: m.manifest.version,
        creator_id: m.creator_id,
        participants: participantIds(m),
      },
      { id: `channel_created.${channelId}`, at: m.created_at },
    );
  }
  switch (envelope.event_type) {
    case EV_CHANNEL_CLOSED:
    case EV_CHANNEL_EXPIRED: {
      const kind = envelope.event_type === EV_CHANNEL_CLOSED ? AuditKind.ChannelClosed : AuditKind.ChannelExpired;
      const data = ChannelEndDataSchema.safeParse(envelope.event_data);
      await ctx.audit.record(
        kind,
        { channel_id: channelId, reason: data.success ? data.data.reason : '' },
        { id: `${kind}.${channelId}`, at: envelope.created_at },
      );
      return;
    }
    default: {
      const record = violationRecordOf(envelope);
      if (record === null) return;
      await ctx.audit.record(
        AuditKind.ExpectationViolated,
        {
          channel_id: channelId,
          expectation: record.expectation,
          on_violation: record.on_violation,
          params: record.params,
          violators: record.violators,
          detail: record.detail,
        },
        { id: `expectation_violated.${envelope.envelope_id}`, at: envelope.created_at },
      );
    }
  }
}
