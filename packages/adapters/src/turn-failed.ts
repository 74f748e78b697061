import { ChannelState, EV_TURN_FAILED, type Envelope, CloseReason } from '@ag2net/protocol';
import type { AdapterResult, ExpectedTurn } from './types.js';

/**
 * The channel closes with `turn_failed` when the participant whose turn it is posts `ag2.turn.failed`: in the
 * protocols where nobody else may speak (consulting, discussion, workflow) the channel would otherwise wait for an
 * answer that is not coming until an expectation ran out. `null` for any other envelope, and for a failure notice
 * from someone whose turn it is not (informational only).
 */
export function closeOnTurnFailure(envelope: Envelope, expected: ExpectedTurn | null): AdapterResult | null {
  if (envelope.event_type !== EV_TURN_FAILED) return null;
  if (expected === null || expected.agentId !== envelope.sender_id) return null;
  return { nextState: ChannelState.Closing, autoCloseReason: CloseReason.TurnFailed };
}
