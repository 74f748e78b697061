import {
  ChannelManifestSchema,
  EV_TEXT,
  ProtocolError,
  repr,
  type ChannelMetadata,
  type Envelope,
} from '@ag2net/protocol';
import { BaseChannelAdapter } from './base.js';
import { orderedParticipants } from './defaults.js';
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
}>;

/**
 * A round-robin discussion among two or more parties. The creator opens; each text passes the turn to the
 * participant after its sender (rotation is relative to the sender, as in AG2). The channel ends by close or TTL.
 */
export class DiscussionAdapter extends BaseChannelAdapter<DiscussionState> {
  readonly manifest = ChannelManifestSchema.parse({
    type: DISCUSSION_TYPE,
    version: 1,
    participants: { min: 2 },
    knobs_schema: { ordering: 'str' },
    default_view_policy: 'named_windowed_summary',
    expectations: [
      { name: 'turn_within', on_violation: 'warn', params: { seconds: 120 } },
      { name: 'turn_within', on_violation: 'hide', params: { seconds: 600 } },
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
    if (envelope.event_type !== EV_TEXT) return state;
    const order = state.participant_order;
    const index = order.indexOf(envelope.sender_id);
    if (index < 0) return state;
    return {
      ...state,
      expected_next_speaker: order[(index + 1) % order.length] ?? null,
      last_speaker_id: envelope.sender_id,
      last_envelope_id: envelope.envelope_id,
      turn_count: state.turn_count + 1,
    };
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
    if (envelope.sender_id !== state.expected_next_speaker) {
      throw new ProtocolError(
        `discussion channel ${repr(metadata.channel_id)} expects ${repr(state.expected_next_speaker)} to speak, got ${repr(envelope.sender_id)}`,
      );
    }
  }

  onAccepted(): AdapterResult {
    return NO_TRANSITION;
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
