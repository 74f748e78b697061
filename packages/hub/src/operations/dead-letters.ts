import type { Envelope } from '@ag2net/protocol';
import type { HomeStores, HubEnv } from '../partition/hub-parts.js';
import type { PartitionPick } from '../partition/partition.js';
import { channelFields } from '../base/log-names.js';
import { AuditKind } from '@ag2net/protocol';

/** How much of a failure's message a dead-letter record keeps. */
const REASON_MAX_CHARS = 500;

/** A delivery the hub gave up on. */
export interface DeadLetter {
  readonly envelope: Envelope;
  /** The WAL message's stream sequence. */
  readonly streamSeq: number;
  /** The recipients whose inbox never took it (empty when only the envelope's audit records failed). */
  readonly recipients: readonly string[];
  readonly reason: string;
}

/** What parking a delivery uses. */
export type DeadLetterDeps = Pick<HubEnv, 'counters' | 'logger'> &
  Pick<HomeStores, 'audit'> &
  PartitionPick<'channels'>;

/**
 * Parks a delivery that kept failing: counts it in `ctx.counters.deadLetters`, logs it, and writes a
 * `delivery_dead_lettered` audit record (id `delivery_dead_lettered.<stream_seq>`, so a repeat is stored once) with
 * the envelope, so an operator can replay it by hand. The record's own failure is logged, never thrown: the
 * delivery consumer moves on either way.
 */
export async function deadLetter(ctx: DeadLetterDeps, letter: DeadLetter): Promise<void> {
  const { envelope, streamSeq, recipients } = letter;
  const reason = letter.reason.slice(0, REASON_MAX_CHARS);
  ctx.counters.deadLetters += 1;
  const metadata = ctx.partition.channels.get(envelope.channel_id)?.metadata;
  ctx.logger.error(
    {
      // The channel's label when it is still in memory (it always is while its deliveries run).
      ...(metadata === undefined ? { channelId: envelope.channel_id } : channelFields(metadata)),
      envelopeId: envelope.envelope_id,
      streamSeq,
      recipients,
      reason,
    },
    'delivery dead-lettered',
  );
  await ctx.audit.recordAfter(
    AuditKind.DeliveryDeadLettered,
    {
      channel_id: envelope.channel_id,
      envelope_id: envelope.envelope_id,
      stream_seq: streamSeq,
      recipients,
      reason,
      envelope,
    },
    { id: `delivery_dead_lettered.${streamSeq}` },
  );
}
