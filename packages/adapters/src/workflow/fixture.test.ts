import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NO_TRANSITION } from '../types.js';
import { WorkflowAdapter } from './adapter.js';
import { TransitionGraph } from './graph.js';
import { admitAll, contextEnv, packetEnv, textEnv, workflowMetadata } from '../../test/workflow-helpers.js';

/** A swarm graph written by AG2's `json.dumps(graph.to_dict(), sort_keys=True)`. */
const FIXTURE = readFileSync(new URL('../../test/fixtures/ag2-workflow-graph.json', import.meta.url), 'utf8');
const fixtureDict: unknown = JSON.parse(FIXTURE);

const adapter = new WorkflowAdapter();
const participants = ['triage', 'eng', 'billing', 'security'];
const meta = workflowMetadata({ participants, knobs: { graph: fixtureDict } });
const handoffTo = (tool: string, extra: Record<string, unknown> = {}) =>
  packetEnv('triage', { routing: { kind: 'handoff', tool, reason: 'r' }, body: 'b', ...extra });

describe('an AG2-written workflow graph', () => {
  it('loads and writes back the same dict and the same JSON text', () => {
    const graph = TransitionGraph.loads(FIXTURE);
    expect(graph.toDict()).toEqual(fixtureDict);
    expect(graph.dumps()).toBe(FIXTURE.trim());
    expect(graph.transitions.map((t) => t.priority)).toEqual([-1, 0, 0, 1, 1, 2, 3]);
    expect([graph.initialSpeaker, graph.maxTurns]).toEqual(['triage', 12]);
  });

  it('routes a support session through tools, stay, a dynamic handoff, context and termination', () => {
    const log = [
      handoffTo('transfer_to_eng'),
      textEnv('eng', 'fixed the bug'),
      handoffTo('transfer_to_billing'),
      textEnv('billing', 'checking invoices'),
      packetEnv('billing', { routing: { kind: 'handoff', tool: 'back', reason: '', target: 'triage' }, body: 'done' }),
      contextEnv('eng', { set: { escalated: true } }),
      textEnv('triage', 'escalating'),
      textEnv('security', 'handled'),
    ];
    const { state, states, results } = admitAll(adapter, meta, log);
    expect(states.map((s) => s.expected_next_speaker)).toEqual([
      'eng',
      'triage',
      'billing',
      'billing',
      'triage',
      'triage',
      'security',
      null,
    ]);
    expect(results.slice(0, 7)).toEqual(Array(7).fill(NO_TRANSITION));
    expect(results[7]).toEqual({ nextState: 'closing', autoCloseReason: 'security_done' });
    expect([state.turn_count, state.context_vars]).toEqual([7, { escalated: true }]);
  });

  it('checks context rules (priority 0) before tool rules (priority 1)', () => {
    const env = handoffTo('transfer_to_eng', { context_updates: { set: { route: 'security' }, delete: [] } });
    expect(admitAll(adapter, meta, [env]).state.expected_next_speaker).toBe('security');
  });

  it('ends with the default no_route when nothing matches', () => {
    const { state, results } = admitAll(adapter, meta, [textEnv('triage', 'hello?')]);
    expect([state.expected_next_speaker, results[0]]).toEqual([
      null,
      { nextState: 'closing', autoCloseReason: 'no_route' },
    ]);
  });

  it('closes with max_turns when billing stays for twelve turns', () => {
    const log = [handoffTo('transfer_to_billing'), ...Array.from({ length: 11 }, () => textEnv('billing', 'more'))];
    const { results } = admitAll(adapter, meta, log);
    expect(results.at(-1)).toEqual({ nextState: 'closing', autoCloseReason: 'max_turns' });
    expect(results.slice(0, -1).every((r) => r === NO_TRANSITION)).toBe(true);
  });
});
