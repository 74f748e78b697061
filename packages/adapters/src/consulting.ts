import { repr } from '@ag2net/protocol/internal';
import {
  ChannelManifestSchema,
  ChannelState,
  EV_TEXT,
  ParticipantRole,
  ProtocolError,
  isProtocolEvent,
  type ChannelMetadata,
  type Envelope,
  CloseReason,
  ViolationHandlerName,
} from '@ag2net/protocol';
import { BaseChannelAdapter } from './base.js';
import { validateTwoParty } from './defaults.js';
import { SAY_TOOL } from './say-tool.js';
import { closeOnTurnFailure } from './turn-failed.js';
import { NO_TRANSITION, type AdapterResult, type ExpectedTurn, type ToolSpec, type ViewSpec } from './types.js';

export const CONSULTING_TYPE = 'consulting';

/** One question from the initiator, one answer from the respondent, then the channel closes. */
export type ConsultingState = Readonly<{
  initiator_sent: boolean;
  respondent_replied: boolean;
  last_envelope_id: string | null;
}>;

const INITIAL: ConsultingState = Object.freeze({
  initiator_sent: false,
  respondent_replied: false,
  last_envelope_id: null,
});

function respondentOf(metadata: ChannelMetadata): string | null {
  return metadata.participants.find((p) => p.role === ParticipantRole.Respondent)?.agent_id ?? null;
}

/**
 * Strict question and answer between two parties: the initiator speaks once, the respondent replies once, and
 * the channel ends with `consulting_complete`. Non-text events are informational and always pass.
 */
export class ConsultingAdapter extends BaseChannelAdapter<ConsultingState> {
  readonly manifest = ChannelManifestSchema.parse({
    type: CONSULTING_TYPE,
    version: 1,
    participants: {
      min: 2,
      max: 2,
      roles: [ParticipantRole.Initiator, ParticipantRole.Respondent],
    },
    knobs_schema: {},
    default_view_policy: 'full_transcript',
    expectations: [
      {
        name: 'acks_within',
        on_violation: ViolationHandlerName.AutoClose,
        params: { seconds: 30 },
      },
      {
        name: 'reply_within',
        on_violation: ViolationHandlerName.AutoClose,
        params: { seconds: 600 },
      },
    ],
  });

  initialState(): ConsultingState {
    return INITIAL;
  }

  fold(envelope: Envelope, state: ConsultingState): ConsultingState {
    if (envelope.event_type !== EV_TEXT) return state;
    if (!state.initiator_sent) {
      return {
        ...state,
        initiator_sent: true,
        last_envelope_id: envelope.envelope_id,
      };
    }
    if (!state.respondent_replied) {
      return {
        ...state,
        respondent_replied: true,
        last_envelope_id: envelope.envelope_id,
      };
    }
    return state;
  }

  validateCreate(metadata: ChannelMetadata): void {
    validateTwoParty(CONSULTING_TYPE, metadata);
  }

  validateSend(metadata: ChannelMetadata, envelope: Envelope, state: ConsultingState): void {
    if (isProtocolEvent(envelope.event_type) || envelope.event_type !== EV_TEXT) return;
    const cid = repr(metadata.channel_id);
    const sid = repr(envelope.sender_id);
    if (state.initiator_sent && state.respondent_replied) {
      throw new ProtocolError(`consulting channel ${cid} already complete`);
    }
    if (!state.initiator_sent) {
      if (envelope.sender_id !== metadata.creator_id) {
        throw new ProtocolError(
          `consulting channel ${cid} expects first send from initiator ${repr(metadata.creator_id)}, got ${sid}`,
        );
      }
      return;
    }
    const respondent = respondentOf(metadata);
    if (respondent === null) throw new ProtocolError(`consulting channel ${cid} has no respondent`);
    if (envelope.sender_id !== respondent) {
      throw new ProtocolError(
        `consulting channel ${cid} expects reply from respondent ${repr(respondent)}, got ${sid}`,
      );
    }
  }

  /**
   * Ends the channel once both sides have spoken (AG2 closes directly; here the hub drains through `closing`), or
   * with `turn_failed` when the respondent could not answer.
   */
  onAccepted(metadata: ChannelMetadata, envelope: Envelope, state: ConsultingState): AdapterResult {
    const failed = closeOnTurnFailure(envelope, this.expectedNext(metadata, state));
    if (failed !== null) return failed;
    if (envelope.event_type === EV_TEXT && state.initiator_sent && state.respondent_replied) {
      return {
        nextState: ChannelState.Closing,
        autoCloseReason: CloseReason.ConsultingComplete,
      };
    }
    return NO_TRANSITION;
  }

  override expectedNext(metadata: ChannelMetadata, state: ConsultingState): ExpectedTurn | null {
    if (!state.initiator_sent) {
      return {
        agentId: metadata.creator_id,
        triggeringEnvelopeId: state.last_envelope_id,
      };
    }
    const respondent = respondentOf(metadata);
    if (!state.respondent_replied && respondent !== null) {
      return {
        agentId: respondent,
        triggeringEnvelopeId: state.last_envelope_id,
      };
    }
    return null;
  }

  defaultViewPolicy(): ViewSpec {
    return { name: 'full_transcript' };
  }

  /** `say` for the initiator before the question, and for the respondent after it until the reply. */
  override toolsFor(
    metadata: ChannelMetadata,
    state: ConsultingState | null,
    participantId: string,
  ): readonly ToolSpec[] {
    const current = state ?? INITIAL;
    const isInitiator = participantId === metadata.creator_id;
    if (isInitiator && !current.initiator_sent) return [SAY_TOOL];
    if (!isInitiator && current.initiator_sent && !current.respondent_replied) return [SAY_TOOL];
    return [];
  }
}
