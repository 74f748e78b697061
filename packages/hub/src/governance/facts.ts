import type { AdapterState, HubAdapter } from '@ag2net/adapters';
import { violationRecordOf } from '@ag2net/protocol/internal';
import {
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_EXPIRED,
  EV_CHANNEL_OPENED,
  EV_EXPECTATION_VIOLATED,
  EV_TEXT,
  isProtocolEvent,
  participantIds,
  type ChannelMetadata,
  type Envelope,
  ViolationHandlerName,
  expectationViolatedReason,
} from '@ag2net/protocol';
import { LazyMap, LazySet } from './lazy-collections.js';
import { keysOf } from './violation-record.js';

/** The turn the adapter expects, and since when. */
export interface TurnFact {
  readonly agentId: string;
  readonly triggeringEnvelopeId: string | null;
  /** When this turn began (the admission time of the envelope after which it was expected), ms. */
  readonly since: number;
  /** The sequence of that envelope: the turn's identity within the channel. */
  readonly sequence: number;
}

/**
 * What expectation evaluators need to know about a channel, kept up to date at admission so that a sweep never
 * reads a log (AG2 re-read every WAL on every tick). Folded from the channel's envelopes by `foldFacts`, the same
 * way live and on hydrate, so a hydrated hub has the same facts as the live one. Times are ms since the epoch.
 */
export interface ChannelFacts {
  /** When the channel opened (its `ag2.channel.opened`); `null` while pending. */
  openedAt: number | null;
  /** When the latest content envelope was admitted: anything but protocol events and violation records. */
  lastContentAt: number | null;
  /** Per participant: when it last sent an `EV_TEXT`. */
  readonly lastTextFrom: Map<string, number>;
  /** Per participant: when the latest `EV_TEXT` addressed to it by someone else was admitted. */
  readonly lastTextTo: Map<string, number>;
  /** Whose turn the adapter expects, or `null`. */
  turn: TurnFact | null;
  /** The keys of the violations fired in this channel (`firedKey`). */
  readonly fired: Set<string>;
  /** The close reason of the first `auto_close` violation fired, so that a crash before the close is finished after. */
  autoClose: string | null;
}

/**
 * The facts of a channel with an empty log. Its maps and set allocate storage only when first written (`LazyMap`):
 * an idle channel has no text and no violation, and three empty hash tables were about 550 bytes of its heap.
 */
export function newFacts(): ChannelFacts {
  return {
    openedAt: null,
    lastContentAt: null,
    lastTextFrom: new LazyMap(),
    lastTextTo: new LazyMap(),
    turn: null,
    fired: new LazySet(),
    autoClose: null,
  };
}

/** Where an appended envelope lands: the channel as it is after the envelope was folded into its adapter state. */
export interface FoldTarget {
  readonly facts: ChannelFacts;
  readonly metadata: ChannelMetadata;
  readonly adapter: HubAdapter | null;
  readonly state: AdapterState | null;
}

/** Updates the facts with an admitted envelope. Call it after the adapter state has folded the envelope. */
export function foldFacts(target: FoldTarget, envelope: Envelope): void {
  const { facts } = target;
  const at = Date.parse(envelope.created_at);
  const type = envelope.event_type;
  if (type === EV_CHANNEL_CLOSED || type === EV_CHANNEL_EXPIRED) {
    // An ended channel is never evaluated again; like AG2, drop what only evaluation needs.
    facts.lastTextFrom.clear();
    facts.lastTextTo.clear();
    facts.fired.clear();
    facts.turn = null;
    facts.autoClose = null;
    return;
  }
  if (type === EV_CHANNEL_OPENED) facts.openedAt = at;
  if (type === EV_EXPECTATION_VIOLATED) {
    const record = violationRecordOf(envelope);
    if (record !== null) {
      for (const key of keysOf(record)) facts.fired.add(key);
      if (record.on_violation === ViolationHandlerName.AutoClose && facts.autoClose === null) {
        facts.autoClose = expectationViolatedReason(record.expectation);
      }
    }
  } else if (!isProtocolEvent(type)) {
    facts.lastContentAt = at;
  }
  if (type === EV_TEXT) {
    facts.lastTextFrom.set(envelope.sender_id, at);
    const addressed = envelope.audience ?? participantIds(target.metadata);
    for (const id of addressed) if (id !== envelope.sender_id) facts.lastTextTo.set(id, at);
  }
  facts.turn = nextTurn(target, envelope, at);
}

function nextTurn(target: FoldTarget, envelope: Envelope, at: number): TurnFact | null {
  const { adapter, state, facts } = target;
  if (adapter === null || state === null) return null;
  let expected;
  try {
    expected = adapter.expectedNext(target.metadata, state);
  } catch {
    return null;
  }
  if (expected === null) return null;
  const current = facts.turn;
  if (
    current !== null &&
    current.agentId === expected.agentId &&
    current.triggeringEnvelopeId === expected.triggeringEnvelopeId
  ) {
    return current;
  }
  return {
    agentId: expected.agentId,
    triggeringEnvelopeId: expected.triggeringEnvelopeId,
    since: at,
    sequence: envelope.sequence ?? 0,
  };
}

/** The facts as plain, ordered data (for snapshots). */
export function factsSnapshot(facts: ChannelFacts): Record<string, unknown> {
  const sorted = (m: Map<string, number>) => [...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    opened_at: facts.openedAt,
    last_content_at: facts.lastContentAt,
    last_text_from: sorted(facts.lastTextFrom),
    last_text_to: sorted(facts.lastTextTo),
    turn: facts.turn,
    fired: [...facts.fired].sort(),
    auto_close: facts.autoClose,
  };
}
