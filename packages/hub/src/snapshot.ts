import type { HubContext } from './core/context.js';

/**
 * The hub's whole state as plain data: registry, channels with their adapter states and indexes. Two hubs with the
 * same snapshot behave the same; tests compare a live hub with one hydrated cold from NATS.
 */
export function snapshotOf(ctx: HubContext): HubSnapshot {
  return {
    agents: ctx.registry.all().map((r) => ({ passport: r.passport, resume: r.resume, rule: r.rule, skill: r.skill })),
    channels: ctx.channels.all().map((rt) => ({
      metadata: rt.metadata,
      state: rt.state,
      last_stream_seq: rt.lastStreamSeq,
      stream_seqs: [...rt.streamSeqs],
      envelope_ids: [...rt.envelopeIds.entries()].map(([id, ref]) => [id, ref.sequence, ref.createdAt] as const),
      causation: [...rt.causation.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
      closing_at: rt.closingAt,
    })),
  };
}

/** See `snapshotOf`. */
export interface HubSnapshot {
  readonly agents: readonly unknown[];
  readonly channels: readonly unknown[];
}
