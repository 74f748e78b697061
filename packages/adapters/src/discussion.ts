import { repr } from '@ag2net/protocol/internal';
import {
  ChannelManifestSchema,
  EV_TEXT,
  ProtocolError,
  type ChannelMetadata,
  type Envelope,
  ViolationHandlerName,
} from '@ag2net/protocol';
import { BaseChannelAdapter } from './base.js';
import { orderedParticipants } from './defaults.js';
import { hiddenBy, skipHidden, withHidden, withoutHidden } from './hide.js';
import { closeOnTurnFailure } from './turn-failed.js';
import { NO_TRANSITION, type AdapterResult, type ExpectedTurn, type ViewSpec } from './types.js';

export const DISCUSSION_TYPE = 'discussion';
export const ORDERING_ROUND_ROBIN = 'round_robin';
const ORDERINGS: readonly string[] = [ORDERING_ROUND_ROBIN];

/** N-party round robin: after each text, the turn passes to the participant after the speaker. */
export type DiscussionState = Readonly<{
  participant_order: readonly string[];
  expected_next_speaker: string | null;
  last_speaker_id: string | null;
  last_envelope_id: string | null;
  turn_count: number;
  /**
   * Participants the hub hid for missing their turn (`hide` handler), in rotation order; absent when nobody is.
   * Not in AG2, which declared `hide` but never built it.
   */
  hidden?: readonly string[];
}>;

/**
 * A round-robin discussion among two or more parties. The creator opens; each text passes the turn to the
 * participant after its sender (rotation is relative to the sender, as in AG2). The channel ends by close or TTL.
 *
 * Hidden participants (the hub's `hide` violation records): the rotation skips them — the turn goes to the next
 * participant after the pick who is not hidden, or stays with the pick when everyone is hidden. Hiding the expected
 * speaker passes the turn on at once. A hidden participant may speak at any time, out of turn; doing so un-hides it,
 * and the turn passes on from it as from any speaker.
 */
export class DiscussionAdapter extends BaseChannelAdapter<DiscussionState> {
  readonly manifest = ChannelManifestSchema.parse({
    type: DISCUSSION_TYPE,
    version: 1,
    participants: { min: 2 },
    knobs_schema: { ordering: 'str' },
    default_view_policy: 'named_windowed_summary',
    expectations: [
      { name: 'turn_within', on_violation: ViolationHandlerName.Warn, params: { seconds: 120 } },
      { name: 'turn_within', on_violation: ViolationHandlerName.Hide, params: { seconds: 600 } },
    ],
  });

  initialState(metadata: ChannelMetadata): DiscussionState {
    return {
      participant_order: orderedParticipants(metadata),
      expected_next_speaker: metadata.creator_id,
      last_speaker_id: null,
      last_envelope_id: null,
      turn_count: 0,
    };
  }

  fold(envelope: Envelope, state: DiscussionState): DiscussionState {
    const order = state.participant_order;
    const hide = hiddenBy(envelope, order);
    if (hide !== null) return foldHide(state, hide);
    if (envelope.event_type !== EV_TEXT) return state;
    const index = order.indexOf(envelope.sender_id);
    if (index < 0) return state;
    const hidden = withoutHidden(state.hidden, envelope.sender_id);
    const pick = order[(index + 1) % order.length];
    return withHiddenField(
      {
        ...state,
        expected_next_speaker: pick === undefined ? null : skipHidden(order, hidden, pick),
        last_speaker_id: envelope.sender_id,
        last_envelope_id: envelope.envelope_id,
        turn_count: state.turn_count + 1,
      },
      hidden,
    );
  }

  validateCreate(metadata: ChannelMetadata): void {
    const n = metadata.participants.length;
    if (n < 2) throw new ProtocolError(`discussion requires at least 2 participants, got ${n}`);
    const ordering = metadata.knobs['ordering'] ?? ORDERING_ROUND_ROBIN;
    if (typeof ordering !== 'string' || !ORDERINGS.includes(ordering)) {
      throw new ProtocolError(
        `discussion knobs.ordering=${repr(ordering)} not supported; choose from ${repr(ORDERINGS)}`,
      );
    }
  }

  validateSend(metadata: ChannelMetadata, envelope: Envelope, state: DiscussionState): void {
    if (envelope.event_type !== EV_TEXT) return;
    if (state.hidden?.includes(envelope.sender_id) === true) return;
    if (envelope.sender_id !== state.expected_next_speaker) {
      throw new ProtocolError(
        `discussion channel ${repr(metadata.channel_id)} expects ${repr(state.expected_next_speaker)} to speak, got ${repr(envelope.sender_id)}`,
      );
    }
  }

  /** Nothing ends a discussion but its participants, except a failed turn of the expected speaker: `turn_failed`. */
  onAccepted(metadata: ChannelMetadata, envelope: Envelope, state: DiscussionState): AdapterResult {
    return closeOnTurnFailure(envelope, this.expectedNext(metadata, state)) ?? NO_TRANSITION;
  }

  override expectedNext(_metadata: ChannelMetadata, state: DiscussionState): ExpectedTurn | null {
    if (state.expected_next_speaker === null) return null;
    return {
      agentId: state.expected_next_speaker,
      triggeringEnvelopeId: state.last_envelope_id,
    };
  }

  defaultViewPolicy(metadata: ChannelMetadata): ViewSpec {
    return {
      name: 'named_windowed_summary',
      recentN: Math.max(2 * metadata.participants.length, 4),
    };
  }
}

/** Hides `added`; an expected speaker who is now hidden passes the turn on. */
function foldHide(state: DiscussionState, added: readonly string[]): DiscussionState {
  if (added.length === 0) return state;
  const order = state.participant_order;
  const hidden = withHidden(order, state.hidden, added);
  const expected = state.expected_next_speaker;
  return withHiddenField(
    { ...state, expected_next_speaker: expected === null ? null : skipHidden(order, hidden, expected) },
    hidden,
  );
}

/** The state with `hidden` set, or without the field when nobody is hidden (so that states stay AG2-shaped). */
function withHiddenField(state: DiscussionState, hidden: readonly string[] | undefined): DiscussionState {
  const { hidden: _previous, ...rest } = state;
  return hidden === undefined ? rest : { ...rest, hidden };
}
