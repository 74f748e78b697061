import {
  ContextSetDataSchema,
  EV_PACKET,
  EV_TEXT,
  PacketDataSchema,
  isProtocolEvent,
  type Envelope,
  type PacketRouting,
  CloseReason,
} from '@ag2net/protocol';
import type { TransitionGraph } from './graph.js';
import { updateContext } from './private-context.js';
import type { TransitionDecision, WorkflowState } from './types.js';

/** True for the envelopes that take a turn: `EV_TEXT` and `EV_PACKET`. */
export function isSubstantive(eventType: string): boolean {
  return !isProtocolEvent(eventType) && (eventType === EV_TEXT || eventType === EV_PACKET);
}

/** Folds an `EV_CONTEXT_SET`: only `context_vars` changes. Malformed data leaves the state as it is. */
export function foldContextSet(envelope: Envelope, state: WorkflowState): WorkflowState {
  const parsed = ContextSetDataSchema.safeParse(envelope.event_data);
  if (!parsed.success) return state;
  return updateContext(state, parsed.data, envelope);
}

/**
 * Folds a substantive envelope (§5.2 steps 3–4): a packet's `context_updates` apply first; then the bookkeeping
 * (last speaker and envelope, turn count) advances; then the next speaker comes from the packet's routing — a finish
 * ends the workflow, a handoff with a target goes straight there — or else from the graph. A packet whose
 * `event_data` is malformed, or a graph rule that throws, leaves the state as it is.
 */
export function foldTurn(envelope: Envelope, state: WorkflowState, graph: TransitionGraph): WorkflowState {
  let updated = state;
  let routing: PacketRouting | undefined;
  if (envelope.event_type === EV_PACKET) {
    const parsed = PacketDataSchema.safeParse(envelope.event_data);
    if (!parsed.success) return state;
    routing = parsed.data.routing;
    if (parsed.data.context_updates !== undefined) {
      updated = updateContext(state, parsed.data.context_updates, envelope);
    }
  }
  const advanced: WorkflowState = {
    ...updated,
    last_speaker_id: envelope.sender_id,
    last_envelope_id: envelope.envelope_id,
    turn_count: state.turn_count + 1,
    pending_close_reason: '',
  };
  const decision = routedDecision(routing) ?? selectSafely(graph, advanced, envelope);
  if (decision === null) return state;
  return { ...advanced, expected_next_speaker: decision.nextSpeaker, pending_close_reason: decision.closeReason };
}

/** The decision a packet's routing makes by itself, or `null` when the graph decides. */
function routedDecision(routing: PacketRouting | undefined): TransitionDecision | null {
  if (routing?.kind === 'finish') return { nextSpeaker: null, closeReason: routing.reason || CloseReason.Finished };
  if (routing?.kind === 'handoff' && routing.target) return { nextSpeaker: routing.target, closeReason: '' };
  return null;
}

function selectSafely(graph: TransitionGraph, state: WorkflowState, envelope: Envelope): TransitionDecision | null {
  try {
    return graph.select(state, envelope);
  } catch {
    // fold must never throw (it is replayed on hydrate); a custom rule that throws leaves the state as it is.
    return null;
  }
}
