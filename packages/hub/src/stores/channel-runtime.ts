import type { AdapterState, HubAdapter } from '@ag2net/adapters';
import type { ChannelMetadata, Envelope } from '@ag2net/protocol';
import { foldFacts, newFacts, type ChannelFacts } from '../governance/facts.js';
import { isLifecycleEvent } from './lifecycle-events.js';
import { RecentWindow } from './recent-window.js';

/** What the hub keeps in memory for one channel; all of it is derivable from KV metadata and the channel's WAL. */
export interface ChannelRuntime {
  metadata: ChannelMetadata;
  /** `null` when no adapter is registered for the channel's manifest (the channel is then read-only). */
  readonly adapter: HubAdapter | null;
  state: AdapterState | null;
  /** Stream sequence of the channel's last WAL message (0 when empty): the OCC expectation of the next append. */
  lastStreamSeq: number;
  /** Stream sequence of each admitted envelope: `streamSeqs[sequence - 1]`. */
  readonly streamSeqs: number[];
  /**
   * Envelope id → its sequence for the channel's last `RECENT_IDS` envelopes, so that a retried post is answered,
   * not admitted again. Older ids are not kept (see `RECENT_IDS` for why retries stay exactly-once).
   */
  readonly envelopeIds: RecentWindow<AdmittedRef>;
  /** `(sender, causation_id)` → envelope id for the last `RECENT_IDS` answers: AG2's causation index, per channel. */
  readonly causation: RecentWindow<string>;
  /** For a closing channel: the last sequence that must be delivered before it closes. */
  closingAt: number | null;
  /** `created_at` of the channel's last envelope (`''` while its log is empty). */
  lastCreatedAt: string;
  /** What expectation evaluators read, kept up to date here so that sweeps never read the log. */
  readonly facts: ChannelFacts;
  /**
   * The channel's handshake and lifecycle envelopes in log order (at most one per participant and event): folding
   * them again corrects metadata that lags the log, which is how a snapshot restores it. Replaced by `concat`, never
   * pushed to: it holds a few entries, and an array grown by `push` (or spread) reserves room for 17, about 120 bytes
   * more per idle channel.
   */
  lifecycle: readonly Envelope[];
  /** Per agent: how many envelopes of this channel count in its inbox's pending count (released when it ends). */
  readonly inboxAdmitted: Map<string, number>;
  /**
   * True for an ended channel whose adapter state and indexes are not in memory but in its final snapshot (see
   * `attached`): only its metadata is here. Ended channels are never folded again, on hydrate or live.
   */
  readonly detached: boolean;
}

/** Where an admitted envelope is. */
export interface AdmittedRef {
  readonly sequence: number;
  readonly createdAt: string;
}

/**
 * How many recent envelope ids (and causation answers) a channel keeps in memory: 1,024, about 150 KB per busy
 * channel. A retry within the channel's next 1,024 envelopes gets the original ack from memory. An older retry is
 * checked again like a new post; if it still fits, the WAL's duplicate window (two minutes) knows its id and the writer
 * answers with the stored entry: the original ack again, and nothing is admitted twice. Clients retry for at most
 * their `retryForMs` (30 s by default), well inside both.
 */
export const RECENT_IDS = 1024;

export function causationKey(senderId: string, causationId: string): string {
  return `${senderId}\u0000${causationId}`;
}

/** A fresh runtime for a channel with an empty log. */
export function newRuntime(
  metadata: ChannelMetadata,
  adapter: HubAdapter | null,
  state: AdapterState | null,
): ChannelRuntime {
  return {
    metadata,
    adapter,
    state,
    lastStreamSeq: 0,
    streamSeqs: [],
    envelopeIds: new RecentWindow(RECENT_IDS),
    causation: new RecentWindow(RECENT_IDS),
    closingAt: null,
    lastCreatedAt: '',
    facts: newFacts(),
    lifecycle: [],
    inboxAdmitted: new Map(),
    detached: false,
  };
}

/** The runtime of an ended channel whose state lives in its final snapshot: metadata only. */
export function detachedRuntime(metadata: ChannelMetadata, adapter: HubAdapter | null): ChannelRuntime {
  return { ...newRuntime(metadata, adapter, null), detached: true };
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
  if (isLifecycleEvent(envelope.event_type)) rt.lifecycle = rt.lifecycle.concat([envelope]);
}
