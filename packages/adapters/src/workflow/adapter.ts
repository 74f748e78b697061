import { formatIssues, repr } from '@ag2net/protocol/internal';
import {
  ChannelState,
  ContextSetDataSchema,
  EV_CONTEXT_SET,
  EV_PACKET,
  EV_TEXT,
  PacketDataSchema,
  ProtocolError,
  createEnvelope,
  isParticipant,
  type ChannelManifest,
  type ChannelMetadata,
  type Envelope,
  type Rendered,
  CloseReason,
} from '@ag2net/protocol';
import type { z } from 'zod';
import {
  defaultBuildPacketEnvelope,
  defaultBuildTextEnvelope,
  defaultExtractTurnInput,
  defaultRenderEnvelope,
  orderedParticipants,
} from '../defaults.js';
import { hiddenBy, skipHidden, withHidden, withoutHidden } from '../hide.js';
import {
  NO_TRANSITION,
  type AdapterResult,
  type ChannelAdapter,
  type ExpectedTurn,
  type PacketOptions,
  type RoundInput,
  type TextOptions,
  type ToolSpec,
  type ViewSpec,
} from '../types.js';
import { foldContextSet, foldTurn, isSubstantive } from './fold.js';
import { workflowStateFor } from './private-context.js';
import { GraphCache } from './graph-cache.js';
import { checkInitialSpeaker, contextVarsKnob, graphKnob, loadGraph } from './knobs.js';
import { WORKFLOW_MANIFEST } from './manifest.js';
import { packetTurnText, renderPacket } from './packet-text.js';
import { createTransitionRegistry, type TransitionRegistry } from './registry.js';
import { resolveRouting } from './routing.js';
import type { WorkflowState } from './types.js';
import { closeOnTurnFailure } from '../turn-failed.js';

/** Options of `new WorkflowAdapter(...)`. */
export interface WorkflowAdapterOptions {
  /** The names graphs may use; default a fresh `createTransitionRegistry()` (built-ins only). */
  readonly registry?: TransitionRegistry;
}

/**
 * AG2's workflow: an orchestrated channel of 2+ participants whose next speaker a `TransitionGraph` (in
 * `knobs.graph`) picks after every `EV_TEXT` or `EV_PACKET`; `EV_CONTEXT_SET` changes the context variables the
 * graph can test. The channel closes when the graph or a `Finish` terminates, or after `max_turns` turns.
 *
 * Hidden participants (the hub's `hide` violation records, for manifests that declare `hide`): when the graph or a
 * handoff picks a hidden participant, the turn goes to the next participant after it in `participant_order` who is
 * not hidden, or stays with the pick when everyone is hidden; hiding the expected speaker passes the turn on the same
 * way. A hidden participant may take a turn at any time, out of turn; doing so un-hides it, and its envelope routes
 * the workflow as usual. Hiding never ends a workflow.
 */
export class WorkflowAdapter implements ChannelAdapter<WorkflowState> {
  readonly manifest: ChannelManifest = WORKFLOW_MANIFEST;
  readonly registry: TransitionRegistry;
  readonly #graphs: GraphCache;

  constructor(options: WorkflowAdapterOptions = {}) {
    this.registry = options.registry ?? createTransitionRegistry();
    this.#graphs = new GraphCache(this.registry);
  }

  initialState(metadata: ChannelMetadata): WorkflowState {
    const graphData = graphKnob(metadata);
    const graph = loadGraph(this.#graphs, graphData);
    const order = orderedParticipants(metadata);
    checkInitialSpeaker(graph, order);
    return {
      participant_order: order,
      expected_next_speaker: graph.initialSpeaker,
      last_speaker_id: null,
      last_envelope_id: null,
      turn_count: 0,
      pending_close_reason: '',
      creator_id: metadata.creator_id,
      graph_data: graphData,
      context_vars: contextVarsKnob(metadata),
    };
  }

  /** Pure: returns a new state, never mutates its inputs and never throws (see `foldTurn`). */
  fold(envelope: Envelope, state: WorkflowState): WorkflowState {
    const hide = hiddenBy(envelope, state.participant_order);
    if (hide !== null) return foldHide(state, hide);
    if (envelope.event_type === EV_CONTEXT_SET) return foldContextSet(envelope, state);
    if (!isSubstantive(envelope.event_type)) return state;
    const graph = this.#graphs.tryLoad(state.graph_data);
    if (graph === null) return state;
    const next = foldTurn(envelope, state, graph);
    if (next === state || state.hidden === undefined) return next;
    const hidden = withoutHidden(state.hidden, envelope.sender_id);
    const expected = next.expected_next_speaker;
    return withHiddenField(
      {
        ...next,
        expected_next_speaker: expected === null ? null : skipHidden(next.participant_order, hidden, expected),
      },
      hidden,
    );
  }

  /**
   * AG2's checks, plus `knobs.context_vars` (AG2 checked it only in `initialState`, after the channel was
   * already cached).
   */
  validateCreate(metadata: ChannelMetadata): void {
    const n = metadata.participants.length;
    if (n < 2) throw new ProtocolError(`workflow requires at least 2 participants, got ${n}`);
    const graph = loadGraph(this.#graphs, graphKnob(metadata));
    checkInitialSpeaker(graph, [...new Set(metadata.participants.map((p) => p.agent_id))].sort());
    contextVarsKnob(metadata);
  }

  /**
   * AG2's checks: `EV_CONTEXT_SET` only from participants (at any time); a turn only from the expected speaker.
   * Added: a malformed `EV_PACKET` or `EV_CONTEXT_SET` (which fold would ignore) is rejected, and so is a handoff
   * whose `target` is not a participant — AG2 admitted it and the channel waited for a speaker who could never
   * speak.
   */
  validateSend(metadata: ChannelMetadata, envelope: Envelope, state: WorkflowState): void {
    const cid = repr(metadata.channel_id);
    const sid = repr(envelope.sender_id);
    if (envelope.event_type === EV_CONTEXT_SET) {
      if (!isParticipant(metadata, envelope.sender_id)) {
        throw new ProtocolError(`workflow ${cid} only accepts EV_CONTEXT_SET from participants, got ${sid}`);
      }
      const update = ContextSetDataSchema.safeParse(envelope.event_data);
      if (!update.success) throw malformed(cid, 'EV_CONTEXT_SET', update.error);
      return;
    }
    if (!isSubstantive(envelope.event_type)) return;
    const expected = state.expected_next_speaker;
    const hidden = state.hidden?.includes(envelope.sender_id) === true;
    if (expected && envelope.sender_id !== expected && !hidden) {
      throw new ProtocolError(`workflow ${cid} expects ${repr(expected)} to speak, got ${sid}`);
    }
    if (envelope.event_type !== EV_PACKET) return;
    const packet = PacketDataSchema.safeParse(envelope.event_data);
    if (!packet.success) throw malformed(cid, 'EV_PACKET', packet.error);
    const routing = packet.data.routing;
    if (routing?.kind === 'handoff' && routing.target && !isParticipant(metadata, routing.target)) {
      throw new ProtocolError(`workflow ${cid} handoff target ${repr(routing.target)} is not a participant`);
    }
  }

  /**
   * After a turn: when nobody is expected, close with the pending reason (or `workflow_terminated`); else at
   * `max_turns` close with `max_turns`. The graph's reason wins over `max_turns`. Unlike AG2, which went straight to
   * `closed`, this asks for `closing` so the hub drains in-flight deliveries before it closes.
   */
  onAccepted(metadata: ChannelMetadata, envelope: Envelope, state: WorkflowState): AdapterResult {
    // The graph routes on the speaker's answer: without one nobody may speak, so the workflow ends.
    const failed = closeOnTurnFailure(envelope, this.expectedNext(metadata, state));
    if (failed !== null) return failed;
    if (!isSubstantive(envelope.event_type)) return NO_TRANSITION;
    if (state.expected_next_speaker === null) {
      return {
        nextState: ChannelState.Closing,
        autoCloseReason: state.pending_close_reason || CloseReason.WorkflowTerminated,
      };
    }
    const maxTurns = this.#graphs.tryLoad(state.graph_data)?.maxTurns ?? null;
    if (maxTurns !== null && state.turn_count >= maxTurns) {
      return { nextState: ChannelState.Closing, autoCloseReason: CloseReason.MaxTurns };
    }
    return NO_TRANSITION;
  }

  expectedNext(_metadata: ChannelMetadata, state: WorkflowState): ExpectedTurn | null {
    if (state.expected_next_speaker === null) return null;
    return { agentId: state.expected_next_speaker, triggeringEnvelopeId: state.last_envelope_id };
  }

  /**
   * The state without what envelopes outside `participantId`'s audience put into the context: a variable such an
   * envelope set or deleted shows the value the participant last saw (or is absent); see `updateContext`.
   */
  stateFor(state: WorkflowState, participantId: string): WorkflowState {
    return workflowStateFor(state, participantId);
  }

  defaultViewPolicy(metadata: ChannelMetadata): ViewSpec {
    return { name: 'named_windowed_summary', recentN: Math.max(metadata.participants.length * 2, 4) };
  }

  extractTurnInput(envelope: Envelope): Rendered | null {
    if (envelope.event_type === EV_TEXT) return defaultExtractTurnInput(envelope);
    if (envelope.event_type === EV_PACKET) return packetTurnText(envelope) || null;
    return null;
  }

  renderEnvelope(envelope: Envelope): Rendered | null {
    return envelope.event_type === EV_PACKET ? renderPacket(envelope) : defaultRenderEnvelope(envelope);
  }

  buildTextEnvelope(channelId: string, senderId: string, options: TextOptions): Envelope {
    return defaultBuildTextEnvelope(channelId, senderId, options);
  }

  buildPacketEnvelope(channelId: string, senderId: string, options: PacketOptions): Envelope {
    return defaultBuildPacketEnvelope(channelId, senderId, options);
  }

  /**
   * The broadcast `EV_PACKET` that ends an LLM turn, its routing from `resolveRouting`; `null` for a silent round
   * (text routing and an empty body). A graph that does not load routes as text.
   */
  buildRoundEnvelope(input: RoundInput<WorkflowState>): Envelope | null {
    const data = input.state.graph_data;
    const graph = Object.keys(data).length > 0 ? this.#graphs.tryLoad(data) : null;
    const routing = resolveRouting(input.events, graph, input.nameToId);
    const body = input.reply.body;
    if (routing.kind === 'text' && body === '') return null;
    return createEnvelope({
      channel_id: input.metadata.channel_id,
      sender_id: input.senderId,
      audience: null,
      event_type: EV_PACKET,
      event_data: { routing, context_updates: { set: {}, delete: [] }, body },
    });
  }

  /** The workflow offers no tools: routing tools are the agent's own, returning `Handoff`/`Finish`. */
  toolsFor(): readonly ToolSpec[] {
    return [];
  }
}

/** Hides `added`; an expected speaker who is now hidden passes the turn on. */
function foldHide(state: WorkflowState, added: readonly string[]): WorkflowState {
  if (added.length === 0) return state;
  const hidden = withHidden(state.participant_order, state.hidden, added);
  const expected = state.expected_next_speaker;
  return withHiddenField(
    {
      ...state,
      expected_next_speaker: expected === null ? null : skipHidden(state.participant_order, hidden, expected),
    },
    hidden,
  );
}

/** The state with `hidden` set, or without the field when nobody is hidden (so that states stay AG2-shaped). */
function withHiddenField(state: WorkflowState, hidden: readonly string[] | undefined): WorkflowState {
  const { hidden: _previous, ...rest } = state;
  return hidden === undefined ? rest : { ...rest, hidden };
}

function malformed(cid: string, eventType: string, error: z.ZodError): ProtocolError {
  return new ProtocolError(formatIssues(`workflow ${cid} got a malformed ${eventType}`, error.issues), {
    cause: error,
  });
}
