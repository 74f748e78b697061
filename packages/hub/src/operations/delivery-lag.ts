import { DeliveryLagSchema, type DeliveryLag } from '@ag2net/protocol';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import type { HubEnv } from '../partition/hub-parts.js';

/**
 * How far the hub's delivery lags (`DeliveryLag`), from its delivery consumer's info on the WAL and the admission
 * time of the oldest envelope not yet fanned out: the first unacked one when some are handed to a hub, else the
 * first undelivered one. `null` when the delivery consumer does not exist (the hub never provisioned).
 */
export async function deliveryLag(ctx: Pick<HubEnv, 'jsm' | 'names'>): Promise<DeliveryLag | null> {
  const { jsm, names } = ctx;
  const info = await jsm.consumers.info(names.walStream, names.deliveryConsumer).catch((err: unknown) => {
    if (isNotFound(err)) return null;
    throw err;
  });
  if (info === null) return null;
  const oldestSeq =
    info.num_ack_pending > 0
      ? info.ack_floor.stream_seq + 1
      : info.num_pending > 0
        ? info.delivered.stream_seq + 1
        : null;
  let age: number | null = null;
  if (oldestSeq !== null) {
    // The first WAL message at or after the sequence: a deleted one is skipped, as delivery skips it.
    const msg = await jsm.direct.getMessage(names.walStream, { seq: oldestSeq, next_by_subj: names.walAll });
    age = msg === null ? null : Math.max(0, (Date.now() - msg.time.getTime()) / 1000);
  }
  return DeliveryLagSchema.parse({
    pending: info.num_pending,
    ack_pending: info.num_ack_pending,
    oldest_pending_age_seconds: age,
  });
}

function isNotFound(err: unknown): boolean {
  if (!(err instanceof JetStreamApiError)) return false;
  return err.code === JetStreamApiCodes.ConsumerNotFound || err.code === JetStreamApiCodes.StreamNotFound;
}
