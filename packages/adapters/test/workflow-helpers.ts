import {
  ChannelMetadataSchema,
  EV_CONTEXT_SET,
  EV_PACKET,
  EV_TEXT,
  createEnvelope,
  type ChannelMetadata,
  type Envelope,
} from '@ag2net/protocol';
import type { AdapterResult } from '../src/types.js';
import type { WorkflowAdapter } from '../src/workflow/adapter.js';
import type { WorkflowState } from '../src/workflow/types.js';

/** Test support for the workflow unit tests (not exported from the package). */

export const CID = 'c1';

/** Options of `workflowMetadata`. */
export interface MetadataOptions {
  /** Participant ids in order; the first is the creator. */
  readonly participants: readonly string[];
  readonly knobs: Record<string, unknown>;
}

/** Metadata of an active workflow channel `c1`, built through the schema. */
export function workflowMetadata(options: MetadataOptions): ChannelMetadata {
  const [creator = 'nobody'] = options.participants;
  return ChannelMetadataSchema.parse({
    channel_id: CID,
    manifest: { type: 'workflow' },
    creator_id: creator,
    participants: options.participants.map((agentId, order) => ({
      agent_id: agentId,
      role: order === 0 ? 'initiator' : 'participant',
      order,
    })),
    state: 'active',
    created_at: '2026-01-01T00:00:00+00:00',
    knobs: options.knobs,
  });
}

let counter = 0;

function nextId(): string {
  counter += 1;
  return `e${counter}`;
}

/** An admitted `EV_TEXT` (with an envelope id). */
export function textEnv(sender: string, text: string): Envelope {
  return createEnvelope({
    channel_id: CID,
    sender_id: sender,
    event_type: EV_TEXT,
    event_data: { text },
    envelope_id: nextId(),
  });
}

/** An admitted `EV_PACKET` with the given `event_data`. */
export function packetEnv(sender: string, data: Record<string, unknown>): Envelope {
  return createEnvelope({
    channel_id: CID,
    sender_id: sender,
    event_type: EV_PACKET,
    event_data: data,
    envelope_id: nextId(),
  });
}

/** An admitted `EV_CONTEXT_SET`. */
export function contextEnv(sender: string, data: Record<string, unknown>): Envelope {
  return createEnvelope({
    channel_id: CID,
    sender_id: sender,
    event_type: EV_CONTEXT_SET,
    event_data: data,
    envelope_id: nextId(),
  });
}

/** What the hub would do with each envelope: validate against the state before, fold, then `onAccepted`. */
export function admit(
  adapter: WorkflowAdapter,
  metadata: ChannelMetadata,
  state: WorkflowState,
  envelope: Envelope,
): { state: WorkflowState; result: AdapterResult } {
  adapter.validateSend(metadata, envelope, state);
  const next = adapter.fold(envelope, state);
  return { state: next, result: adapter.onAccepted(metadata, envelope, next) };
}

/** Admits every envelope in order from the initial state; returns the final state and every result. */
export function admitAll(
  adapter: WorkflowAdapter,
  metadata: ChannelMetadata,
  envelopes: readonly Envelope[],
): { state: WorkflowState; results: AdapterResult[]; states: WorkflowState[] } {
  let state = adapter.initialState(metadata);
  const results: AdapterResult[] = [];
  const states: WorkflowState[] = [];
  for (const envelope of envelopes) {
    const step = admit(adapter, metadata, state, envelope);
    state = step.state;
    results.push(step.result);
    states.push(state);
  }
  return { state, results, states };
}

/** Re-folds a log from the initial state, as hydrate does. */
export function refold(adapter: WorkflowAdapter, metadata: ChannelMetadata, log: readonly Envelope[]): WorkflowState {
  return log.reduce((state, envelope) => adapter.fold(envelope, state), adapter.initialState(metadata));
}

/** A state for target and condition unit tests. */
export function stateWith(fields: Partial<WorkflowState>): WorkflowState {
  return {
    participant_order: [],
    expected_next_speaker: null,
    last_speaker_id: null,
    last_envelope_id: null,
    turn_count: 0,
    pending_close_reason: '',
    creator_id: '',
    graph_data: {},
    context_vars: {},
    ...fields,
  };
}
