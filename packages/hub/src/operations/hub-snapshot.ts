import type { AdapterState } from '@ag2net/adapters';
import { isTerminalChannelState, type ChannelMetadata } from '@ag2net/protocol';
import type { ChannelRuntime } from '../stores/channel-runtime.js';
import { factsSnapshot } from '../governance/facts.js';
import type { HomeStores, HubPolicies } from '../partition/hub-parts.js';
import type { PartitionPick } from '../partition/partition.js';

/**
 * The hub's whole state as plain data: registry, channels with their adapter states, indexes and expectation facts,
 * inbox pending counts and tasks. Two hubs with the same snapshot behave the same; tests compare a live hub with
 * one hydrated cold from NATS. (Rate-limit buckets are not state: a new active hub starts them full.)
 */
export function snapshotOf(
  ctx: Pick<HomeStores, 'registry' | 'tasks'>,
  partitions: readonly (Pick<HubPolicies, 'inboxes'> & PartitionPick<'channels'>)[],
): HubSnapshot {
  const pending = new Map<string, number>();
  for (const p of partitions) for (const [id, n] of p.inboxes.snapshot()) pending.set(id, (pending.get(id) ?? 0) + n);
  return {
    agents: ctx.registry.all().map((r) => ({ passport: r.passport, resume: r.resume, rule: r.rule, skill: r.skill })),
    channels: partitions
      .flatMap((p) => p.partition.channels.all())
      .map((rt) => (isTerminalChannelState(rt.metadata.state) ? endedOf(rt) : channelOf(rt))),
    inbox_pending: [...pending.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    tasks: ctx.tasks.all(),
  };
}

function channelOf(rt: ChannelRuntime): ChannelSnapshot {
  return {
    metadata: rt.metadata,
    state: rt.state,
    last_stream_seq: rt.lastStreamSeq,
    stream_seqs: [...rt.streamSeqs],
    envelope_ids: [...rt.envelopeIds.entries()].map(([id, ref]) => [id, ref.sequence, ref.createdAt] as const),
    causation: [...rt.causation.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    closing_at: rt.closingAt,
    facts: factsSnapshot(rt.facts),
  };
}

/**
 * An ended channel as the hub keeps it: its metadata only, whether it is still in memory or detached (its state is
 * in its final snapshot, see `attached`), so that a hub that hydrated and the live one compare equal.
 */
function endedOf(rt: ChannelRuntime): ChannelSnapshot {
  return {
    metadata: rt.metadata,
    state: null,
    last_stream_seq: 0,
    stream_seqs: [],
    envelope_ids: [],
    causation: [],
    closing_at: null,
    facts: {},
  };
}

/** See `snapshotOf`. */
export interface HubSnapshot {
  readonly agents: readonly unknown[];
  readonly channels: readonly ChannelSnapshot[];
  readonly inbox_pending: readonly unknown[];
  readonly tasks: readonly unknown[];
}

/** One channel in a `HubSnapshot`. */
export interface ChannelSnapshot {
  readonly metadata: ChannelMetadata;
  readonly state: AdapterState | null;
  /** The stream sequence of the channel subject's last message: what the next append expects. */
  readonly last_stream_seq: number;
  readonly stream_seqs: readonly number[];
  readonly envelope_ids: readonly (readonly [string, number, string])[];
  readonly causation: readonly (readonly [string, string])[];
  readonly closing_at: number | null;
  readonly facts: Record<string, unknown>;
}
