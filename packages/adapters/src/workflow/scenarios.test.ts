import { ProtocolError } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { defaultBuildPacketEnvelope } from '../defaults.js';
import { NO_TRANSITION } from '../types.js';
import { WorkflowAdapter } from './adapter.js';
import { FromSpeaker, ToolCalled } from './conditions.js';
import { roundRobin, sequence } from './factories.js';
import { Transition, TransitionGraph } from './graph.js';
import { AgentTarget, RevertToInitiatorTarget, TerminateTarget } from './targets.js';
import { CID, admitAll, packetEnv, refold, textEnv, workflowMetadata } from '../../test/workflow-helpers.js';

const adapter = new WorkflowAdapter();
const trio = ['alice', 'bob', 'carol'];
const closing = (reason: string) => ({ nextState: 'closing', autoCloseReason: reason });

const swarm = new TransitionGraph({
  initialSpeaker: 'triage',
  transitions: [
    new Transition(new ToolCalled('transfer_to_eng'), new AgentTarget('eng')),
    new Transition(new FromSpeaker('eng'), new RevertToInitiatorTarget()),
  ],
});
const swarmMeta = workflowMetadata({ participants: ['triage', 'eng'], knobs: { graph: swarm.toDict() } });
const toEng = (reason = 'bug') =>
  packetEnv('triage', { routing: { kind: 'handoff', tool: 'transfer_to_eng', reason }, body: 'please look' });

describe('workflow integration (test_workflow.py)', () => {
  it("registers under ('workflow', 1)", () => {
    expect([adapter.manifest.type, adapter.manifest.version]).toEqual(['workflow', 1]);
  });

  it('rotates a round-robin workflow and rejects an out-of-turn speaker', () => {
    const meta = workflowMetadata({ participants: trio, knobs: { graph: roundRobin(trio).toDict() } });
    expect(adapter.initialState(meta).expected_next_speaker).toBe('alice');
    const { state, states, results } = admitAll(
      adapter,
      meta,
      trio.map((who) => textEnv(who, `${who} speaks`)),
    );
    expect(states.map((s) => s.expected_next_speaker)).toEqual(['bob', 'carol', 'alice']);
    expect([state.turn_count, state.last_speaker_id]).toEqual([3, 'carol']);
    expect(results).toEqual([NO_TRANSITION, NO_TRANSITION, NO_TRANSITION]);
    expect(() => adapter.validateSend(meta, textEnv('bob', 'me!'), state)).toThrow(
      new ProtocolError("workflow 'c1' expects 'alice' to speak, got 'bob'"),
    );
  });

  it('closes a sequence pipeline with sequence_complete after its last step', () => {
    const meta = workflowMetadata({ participants: trio, knobs: { graph: sequence(trio).toDict() } });
    const { state, results } = admitAll(
      adapter,
      meta,
      trio.map((who) => textEnv(who, 'step')),
    );
    expect(results).toEqual([NO_TRANSITION, NO_TRANSITION, closing('sequence_complete')]);
    expect([state.expected_next_speaker, state.pending_close_reason]).toEqual([null, 'sequence_complete']);
  });

  it('routes a swarm by ToolCalled and reverts to the initiator after the specialist', () => {
    const { states, results } = admitAll(adapter, swarmMeta, [toEng(), textEnv('eng', 'fixed')]);
    expect(states.map((s) => s.expected_next_speaker)).toEqual(['eng', 'triage']);
    expect(results).toEqual([NO_TRANSITION, NO_TRANSITION]);
  });

  it('closes with the finish reason, or finished when the packet gives none', () => {
    const finished = admitAll(adapter, swarmMeta, [
      packetEnv('triage', { routing: { kind: 'finish', reason: 'all_done' }, body: '' }),
    ]);
    expect([finished.state.expected_next_speaker, finished.state.pending_close_reason]).toEqual([null, 'all_done']);
    expect(finished.results).toEqual([closing('all_done')]);
    const bare = admitAll(adapter, swarmMeta, [packetEnv('triage', { routing: { kind: 'finish' } })]);
    expect(bare.results).toEqual([closing('finished')]);
  });

  it('runs the manager pattern: ToolCalled picks a worker, the default reverts to the manager', () => {
    const graph = new TransitionGraph({
      initialSpeaker: 'mgr',
      transitions: [
        new Transition(new ToolCalled('ask_alice'), new AgentTarget('alice')),
        new Transition(new ToolCalled('ask_bob'), new AgentTarget('bob')),
      ],
      defaultTarget: new RevertToInitiatorTarget(),
    });
    const meta = workflowMetadata({ participants: ['mgr', 'alice', 'bob'], knobs: { graph: graph.toDict() } });
    const ask = (tool: string) => packetEnv('mgr', { routing: { kind: 'handoff', tool }, body: 'question' });
    const { states } = admitAll(adapter, meta, [
      ask('ask_alice'),
      textEnv('alice', 'a'),
      ask('ask_bob'),
      textEnv('bob', 'b'),
    ]);
    expect(states.map((s) => s.expected_next_speaker)).toEqual(['alice', 'mgr', 'bob', 'mgr']);
  });

  it('re-folds the log to the live state after a handoff', () => {
    const log = [toEng()];
    const live = admitAll(adapter, swarmMeta, log).state;
    expect(refold(adapter, swarmMeta, log)).toEqual(live);
    expect(live).toMatchObject({
      expected_next_speaker: 'eng',
      last_speaker_id: 'triage',
      turn_count: 1,
      creator_id: 'triage',
      participant_order: ['triage', 'eng'],
    });
  });

  it('rejects knobs without a graph', () => {
    const meta = workflowMetadata({ participants: trio, knobs: {} });
    expect(() => adapter.validateCreate(meta)).toThrow(/graph/);
  });
});

describe('workflow termination (test_workflow_termination.py)', () => {
  const run = (graph: TransitionGraph, speakers: readonly string[]) =>
    admitAll(
      adapter,
      workflowMetadata({ participants: trio, knobs: { graph: graph.toDict() } }),
      speakers.map((s) => textEnv(s, 'turn')),
    ).results;

  it('closes a finished sequence with sequence_complete, not max_turns', () => {
    expect(run(sequence(trio), trio).at(-1)).toEqual(closing('sequence_complete'));
  });

  it('closes a capped round robin with max_turns after the sixth turn', () => {
    const results = run(roundRobin(trio, { maxTurns: 6 }), [...trio, ...trio]);
    expect(results.slice(0, 5)).toEqual(Array(5).fill(NO_TRANSITION));
    expect(results[5]).toEqual(closing('max_turns'));
  });

  it('closes with a custom terminate reason that coincides with max_turns', () => {
    const graph = new TransitionGraph({
      initialSpeaker: 'alice',
      transitions: [
        new Transition(new FromSpeaker('alice'), new AgentTarget('bob')),
        new Transition(new FromSpeaker('bob'), new AgentTarget('carol')),
        new Transition(new FromSpeaker('carol'), new TerminateTarget('custom_done')),
      ],
      maxTurns: 3,
    });
    expect(run(graph, trio)).toEqual([NO_TRANSITION, NO_TRANSITION, closing('custom_done')]);
  });

  it('closes an endless ping-pong with max_turns', () => {
    const graph = new TransitionGraph({
      initialSpeaker: 'alice',
      transitions: [
        new Transition(new FromSpeaker('alice'), new AgentTarget('bob')),
        new Transition(new FromSpeaker('bob'), new AgentTarget('alice')),
      ],
      maxTurns: 4,
    });
    expect(run(graph, ['alice', 'bob', 'alice', 'bob'])).toEqual([
      NO_TRANSITION,
      NO_TRANSITION,
      NO_TRANSITION,
      closing('max_turns'),
    ]);
  });
});

describe('a bridge drives a workflow with packets (test_bridge_drives_workflow.py)', () => {
  const graph = new TransitionGraph({
    initialSpeaker: 'alice',
    transitions: [
      new Transition(new FromSpeaker('alice'), new AgentTarget('bob')),
      new Transition(new FromSpeaker('bob'), new RevertToInitiatorTarget()),
    ],
    defaultTarget: new TerminateTarget('bridge_done'),
    maxTurns: 8,
  });
  const meta = workflowMetadata({ participants: ['alice', 'bob'], knobs: { graph: graph.toDict() } });

  it("advances on the adapter's packets, a handoff packet going straight to its target", () => {
    const first = adapter.buildPacketEnvelope(CID, 'alice', { body: 'please review' });
    const second = adapter.buildPacketEnvelope(CID, 'bob', { body: 'reviewed', handoff: { target: 'alice' } });
    const { states } = admitAll(adapter, meta, [first, second]);
    expect(states.map((s) => [s.expected_next_speaker, s.last_speaker_id])).toEqual([
      ['bob', 'alice'],
      ['alice', 'bob'],
    ]);
  });

  it('advances on a packet from the default builder', () => {
    const env = defaultBuildPacketEnvelope(CID, 'alice', { body: 'hello' });
    expect(admitAll(adapter, meta, [env]).state.expected_next_speaker).toBe('bob');
  });
});
