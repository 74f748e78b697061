import { repr } from '@ag2net/protocol/internal';
import {
  ChannelManifestSchema,
  EV_TEXT,
  ParticipantRole,
  ProtocolError,
  isParticipant,
  type ChannelMetadata,
  type Envelope,
  ViolationHandlerName,
} from '@ag2net/protocol';
import { BaseChannelAdapter } from './base.js';
import { validateTwoParty } from './defaults.js';
import { SAY_TOOL } from './say-tool.js';
import { NO_TRANSITION, type AdapterResult, type ToolSpec, type ViewSpec } from './types.js';

export const CONVERSATION_TYPE = 'conversation';

/** Free two-party chat: either side speaks any time; the channel ends only by close or TTL. */
export type ConversationState = Readonly<{
  turn_count: number;
  last_speaker_id: string | null;
  last_envelope_id: string | null;
}>;

const INITIAL: ConversationState = Object.freeze({
  turn_count: 0,
  last_speaker_id: null,
  last_envelope_id: null,
});

/** Free chat between two parties. Only participants may post text; nobody's turn is ever expected. */
export class ConversationAdapter extends BaseChannelAdapter<ConversationState> {
  readonly manifest = ChannelManifestSchema.parse({
    type: CONVERSATION_TYPE,
    version: 1,
    participants: {
      min: 2,
      max: 2,
      roles: [ParticipantRole.Initiator, ParticipantRole.Respondent],
    },
    knobs_schema: {},
    default_view_policy: 'windowed_summary',
    expectations: [{ name: 'max_silence', on_violation: ViolationHandlerName.Audit, params: { seconds: 3600 } }],
  });

  initialState(): ConversationState {
    return INITIAL;
  }

  fold(envelope: Envelope, state: ConversationState): ConversationState {
    if (envelope.event_type !== EV_TEXT) return state;
    return {
      turn_count: state.turn_count + 1,
      last_speaker_id: envelope.sender_id,
      last_envelope_id: envelope.envelope_id,
    };
  }

  validateCreate(metadata: ChannelMetadata): void {
    validateTwoParty(CONVERSATION_TYPE, metadata);
  }

  validateSend(metadata: ChannelMetadata, envelope: Envelope, _state: ConversationState): void {
    if (envelope.event_type !== EV_TEXT) return;
    if (!isParticipant(metadata, envelope.sender_id)) {
      throw new ProtocolError(
        `conversation channel ${repr(metadata.channel_id)} only accepts sends from participants, got ${repr(envelope.sender_id)}`,
      );
    }
  }

  onAccepted(): AdapterResult {
    return NO_TRANSITION;
  }

  defaultViewPolicy(): ViewSpec {
    return { name: 'windowed_summary', recentN: 10 };
  }

  /** Everyone may `say` at any time. */
  override toolsFor(): readonly ToolSpec[] {
    return [SAY_TOOL];
  }
}
