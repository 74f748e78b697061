import type { AdapterState, ChannelAdapter } from '@ag2net/adapters';
import type { ChannelMetadata, Envelope } from '@ag2net/protocol';
import { foldFacts, newFacts, type ChannelFacts } from '../governance/facts.js';

/** What the hub keeps in memory for one channel; all of it is derivable from KV metadata and the channel's WAL. */
export interface ChannelRuntime {
  metadata: ChannelMetadata;
  /** `null` when no adapter is registered for the channel's manifest (the channel is then read-only). */
  readonly adapter: ChannelAdapter | null;
  state: AdapterState | null;
  /** Stream sequence of the channel's last WAL message (0 when empty): the OCC expectation of the next append. */
  lastStreamSeq: number;
  /** Stream sequence of each admitted envelope: `streamSeqs[sequence - 1]`. */
  readonly streamSeqs: number[];
  /** Admitted envelope id → its sequence, so that a retried post is answered, not admitted again. */
  readonly envelopeIds: Map<string, AdmittedRef>;
  /** `(sender, causation_id)` → envelope id: AG2's causation index, per channel. */
  readonly causation: Map<string, string>;
  /** For a closing channel: the last sequence that must be delivered before it closes. */
  closingAt: number | null;
  /** `created_at` of the channel's last envelope (`''` while its log is empty). */
  lastCreatedAt: string;
  /** What expectation evaluators read, kept up to date here so that sweeps never read the log. */
  readonly facts: ChannelFacts;
}

/** Where an admitted envelope is. */
export interface AdmittedRef {
  readonly sequence: number;
  readonly createdAt: string;
}

export function causationKey(senderId: string, causationId: string): string {
  return `${senderId}\u0000${causationId}`;
}

/** A fresh runtime for a channel with an empty log. */
export function newRuntime(
  metadata: ChannelMetadata,
  adapter: ChannelAdapter | null,
  state: AdapterState | null,
): ChannelRuntime {
  return {
    metadata,
    adapter,
    state,
    lastStreamSeq: 0,
    streamSeqs: [],
    envelopeIds: new Map(),
    causation: new Map(),
    closingAt: null,
    lastCreatedAt: '',
    facts: newFacts(),
  };
}

/**
 * Records an appended envelope in the runtime's indexes, folds it into the adapter state and then into the
 * expectation facts. The one place where live admission and hydrate update a channel, so that both produce the same
 * state.
 */
export function applyAppended(rt: ChannelRuntime, envelope: Envelope, streamSeq: number): void {
  rt.lastStreamSeq = streamSeq;
  rt.lastCreatedAt = envelope.created_at;
  rt.streamSeqs.push(streamSeq);
  rt.envelopeIds.set(envelope.envelope_id, {
    sequence: envelope.sequence ?? rt.streamSeqs.length,
    createdAt: envelope.created_at,
  });
  if (envelope.causation_id)
    rt.causation.set(causationKey(envelope.sender_id, envelope.causation_id), envelope.envelope_id);
  if (rt.adapter !== null && rt.state !== null) rt.state = rt.adapter.fold(envelope, rt.state);
  foldFacts(rt, envelope);
}
