import type { AdapterState } from '@ag2net/adapters';
import { repr } from '@ag2net/protocol/internal';
import { ChannelState, participantIds, type ChannelMetadata, type Expectation } from '@ag2net/protocol';
import type { ChannelFacts } from './facts.js';

/** What an evaluator sees of a channel at one sweep: no log, only the facts kept at admission. */
export interface ExpectationContext {
  readonly metadata: ChannelMetadata;
  /** The adapter state, or `null` when no adapter is registered for the channel. */
  readonly state: AdapterState | null;
  readonly facts: Readonly<ChannelFacts>;
  /** The sweep's time, ms since the epoch. */
  readonly nowMs: number;
}

/** A broken expectation. */
export interface Violation {
  /** Who broke it, in participant order; empty for a channel-wide violation. */
  readonly violators: readonly string[];
  /** Numbers that explain it (`elapsed_seconds`, `threshold_seconds`, …), recorded as they are. */
  readonly detail: Readonly<Record<string, unknown>>;
  /**
   * Which occurrence this is, `""` for expectations that can break once per channel (AG2's). `turn_within` uses
   * `turn:<sequence>` so that each turn can be late once.
   */
  readonly scope?: string;
}

/**
 * Checks one kind of expectation (`name` is what manifests write). `evaluate` is pure and synchronous: a function of
 * the expectation and the context. It may throw on bad params; the sweep logs that and goes on.
 */
export interface ExpectationEvaluator {
  readonly name: string;
  evaluate(expectation: Expectation, context: ExpectationContext): Violation | null;
}

/** `params.seconds` as a number of seconds, or `fallback` when absent. */
export function secondsParam(expectation: Expectation, fallback: number): number {
  const value = expectation.params['seconds'] ?? fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new TypeError(`expectation ${repr(expectation.name)} has invalid params.seconds: ${repr(value)}`);
  }
  return value;
}

const elapsed = (nowMs: number, sinceMs: number): number => (nowMs - sinceMs) / 1000;

/** AG2's `acks_within` (default 30 s): a pending channel whose invitees have not all acked that long after creation. */
export const acksWithin: ExpectationEvaluator = {
  name: 'acks_within',
  evaluate(expectation, { metadata, nowMs }) {
    if (metadata.state !== ChannelState.Pending) return null;
    const seconds = secondsParam(expectation, 30);
    const waited = elapsed(nowMs, Date.parse(metadata.created_at));
    if (waited < seconds || metadata.pending_acks.length === 0) return null;
    return {
      violators: [...metadata.pending_acks],
      detail: { elapsed_seconds: waited, threshold_seconds: seconds },
    };
  },
};

/**
 * AG2's `reply_within` (default 600 s): in an active channel, every participant the latest text addressed to (a
 * broadcast, or one naming it) reached at least that long ago, and who has sent no text since.
 */
export const replyWithin: ExpectationEvaluator = {
  name: 'reply_within',
  evaluate(expectation, { metadata, facts, nowMs }) {
    if (metadata.state !== ChannelState.Active) return null;
    const seconds = secondsParam(expectation, 600);
    const violators = participantIds(metadata).filter((id) => {
      const addressed = facts.lastTextTo.get(id);
      if (addressed === undefined || elapsed(nowMs, addressed) < seconds) return false;
      const replied = facts.lastTextFrom.get(id);
      return replied === undefined || replied < addressed;
    });
    return violators.length === 0 ? null : { violators, detail: { threshold_seconds: seconds } };
  },
};

/**
 * AG2's `max_silence` (default 3600 s): an active channel in which no content (anything but protocol events and
 * violation records) was admitted for that long, counted from creation when there was none. Channel-wide.
 */
export const maxSilence: ExpectationEvaluator = {
  name: 'max_silence',
  evaluate(expectation, { metadata, facts, nowMs }) {
    if (metadata.state !== ChannelState.Active) return null;
    const seconds = secondsParam(expectation, 3600);
    const quiet = elapsed(nowMs, facts.lastContentAt ?? Date.parse(metadata.created_at));
    if (quiet < seconds) return null;
    return { violators: [], detail: { elapsed_seconds: quiet, threshold_seconds: seconds } };
  },
};

/**
 * `turn_within` (default 120 s), which AG2 declares but never built: in an active channel, the participant the
 * adapter expects has not spoken within that many seconds of becoming expected (of the channel opening, for the
 * opening turn). Each turn can be late once (`scope` = `turn:<sequence>`).
 */
export const turnWithin: ExpectationEvaluator = {
  name: 'turn_within',
  evaluate(expectation, { metadata, facts, nowMs }) {
    if (metadata.state !== ChannelState.Active || facts.turn === null) return null;
    const seconds = secondsParam(expectation, 120);
    const since = Math.max(facts.turn.since, facts.openedAt ?? facts.turn.since);
    const waited = elapsed(nowMs, since);
    if (waited < seconds) return null;
    return {
      violators: [facts.turn.agentId],
      detail: {
        elapsed_seconds: waited,
        threshold_seconds: seconds,
        triggering_envelope_id: facts.turn.triggeringEnvelopeId,
      },
      scope: `turn:${facts.turn.sequence}`,
    };
  },
};

/** The four built-in evaluators. */
export const BUILTIN_EVALUATORS: readonly ExpectationEvaluator[] = Object.freeze([
  acksWithin,
  replyWithin,
  maxSilence,
  turnWithin,
]);
