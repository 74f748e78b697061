import { finish, handoff } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import type { TurnEvent } from '../types.js';
import { ToolCalled } from './conditions.js';
import { Transition, TransitionGraph } from './graph.js';
import { resolveRouting } from './routing.js';
import { AgentTarget, TerminateTarget } from './targets.js';

function call(name: string, callId = 'id1', reason = ''): TurnEvent {
  return { type: 'tool_call', callId, name, arguments: reason ? JSON.stringify({ reason }) : '{}' };
}

function result(callId: string, value: unknown = 'ok'): TurnEvent {
  return { type: 'tool_result', callId, result: value };
}

/** A graph with a ToolCalled rule for each tool, as `_graph` in test_packet_routing.py. */
function graphOf(...tools: string[]): TransitionGraph {
  return new TransitionGraph({
    initialSpeaker: 'agent_initial',
    transitions: tools.map((t) => new Transition(new ToolCalled(t), new AgentTarget(`agent_${t}`))),
    defaultTarget: new TerminateTarget('default'),
  });
}

const none = new Map<string, string>();
const ids = (entries: Record<string, string>) => new Map(Object.entries(entries));

describe('resolveRouting', () => {
  it('routes as text without events', () => {
    expect(resolveRouting([], graphOf('delegate_a'), none)).toEqual({ kind: 'text' });
  });

  it('routes as text without a graph', () => {
    expect(resolveRouting([call('delegate_a')], null, none)).toEqual({ kind: 'text' });
  });

  it('turns a call of a watched tool into a static handoff with its reason and no target', () => {
    expect(resolveRouting([call('delegate_a', 'c1', 'go')], graphOf('delegate_a'), none)).toEqual({
      kind: 'handoff',
      tool: 'delegate_a',
      reason: 'go',
    });
  });

  it('routes as text when the called tool is not watched', () => {
    expect(resolveRouting([call('some_other_tool', 'c1')], graphOf('delegate_a'), none)).toEqual({ kind: 'text' });
  });

  it('lets the first of two watched calls win', () => {
    const events = [call('delegate_a', 'c1', 'first'), call('delegate_b', 'c2', 'second')];
    expect(resolveRouting(events, graphOf('delegate_a', 'delegate_b'), none)).toEqual({
      kind: 'handoff',
      tool: 'delegate_a',
      reason: 'first',
    });
  });

  it('turns a Handoff result into a dynamic handoff with the target name resolved to an id', () => {
    const events = [call('smart_route', 'c1'), result('c1', handoff('researcher', 'picked'))];
    expect(resolveRouting(events, graphOf('delegate_a'), ids({ researcher: 'agent-id-researcher' }))).toEqual({
      kind: 'handoff',
      tool: 'smart_route',
      reason: 'picked',
      target: 'agent-id-researcher',
    });
  });

  it('passes an unknown handoff target name through verbatim', () => {
    const events = [call('smart_route', 'c1'), result('c1', handoff('unknown_name'))];
    expect(resolveRouting(events, graphOf('delegate_a'), none)).toEqual({
      kind: 'handoff',
      tool: 'smart_route',
      reason: '',
      target: 'unknown_name',
    });
  });

  it('prefers the dynamic Handoff of a watched tool over its static rule', () => {
    const events = [call('delegate_a', 'c1'), result('c1', handoff('explicit_target'))];
    const routing = resolveRouting(events, graphOf('delegate_a'), ids({ explicit_target: 'agent-id-explicit' }));
    expect(routing).toEqual({ kind: 'handoff', tool: 'delegate_a', reason: '', target: 'agent-id-explicit' });
  });

  it('lets a dynamic handoff emitted first beat a later static one', () => {
    const events = [call('smart_route', 'c1'), result('c1', handoff('alice')), call('delegate_b', 'c2')];
    expect(resolveRouting(events, graphOf('delegate_b'), ids({ alice: 'agent-id-alice' }))).toEqual({
      kind: 'handoff',
      tool: 'smart_route',
      reason: '',
      target: 'agent-id-alice',
    });
  });

  it('lets a static handoff emitted first beat a later dynamic one, leaving no target', () => {
    const events = [call('delegate_a', 'c1'), call('smart_route', 'c2'), result('c2', handoff('bob'))];
    expect(resolveRouting(events, graphOf('delegate_a'), ids({ bob: 'agent-id-bob' }))).toEqual({
      kind: 'handoff',
      tool: 'delegate_a',
      reason: '',
    });
  });

  it('keeps static routing when a watched tool returns a plain string', () => {
    const events = [call('delegate_a', 'c1'), result('c1', 'just a string')];
    expect(resolveRouting(events, graphOf('delegate_a'), none)).toEqual({
      kind: 'handoff',
      tool: 'delegate_a',
      reason: '',
    });
  });

  it('ignores a data result that is not a Handoff on an unwatched tool', () => {
    const events = [call('other_tool', 'c1'), result('c1', { some: 'data' })];
    expect(resolveRouting(events, graphOf('delegate_a'), none)).toEqual({ kind: 'text' });
  });

  it('ignores a result that answers no call', () => {
    const events = [result('orphan', handoff('alice'))];
    expect(resolveRouting(events, graphOf('delegate_a'), ids({ alice: 'agent-id-alice' }))).toEqual({ kind: 'text' });
  });

  it('turns a Finish result into finish routing with its reason and summary', () => {
    const events = [call('finish', 'c1'), result('c1', finish('all done', 'done'))];
    expect(resolveRouting(events, graphOf('delegate_a'), none)).toEqual({
      kind: 'finish',
      tool: 'finish',
      reason: 'done',
      summary: 'all done',
    });
  });

  it("gives a bare Finish the reason 'finished' and an empty summary", () => {
    const events = [call('finish', 'c1'), result('c1', { kind: 'finish' })];
    expect(resolveRouting(events, graphOf('delegate_a'), none)).toEqual({
      kind: 'finish',
      tool: 'finish',
      reason: 'finished',
      summary: '',
    });
  });

  it('lets a Finish emitted before a Handoff win', () => {
    const events = [
      call('finish', 'c1'),
      result('c1', finish('', 'early')),
      call('delegate_a', 'c2'),
      result('c2', handoff('alice')),
    ];
    expect(resolveRouting(events, graphOf('delegate_a'), ids({ alice: 'agent-id-alice' }))).toEqual({
      kind: 'finish',
      tool: 'finish',
      reason: 'early',
      summary: '',
    });
  });

  it('lets a Handoff emitted before a Finish win', () => {
    const events = [
      call('delegate_a', 'c1'),
      result('c1', handoff('alice')),
      call('finish', 'c2'),
      result('c2', finish('', 'late')),
    ];
    expect(resolveRouting(events, graphOf('delegate_a'), ids({ alice: 'agent-id-alice' }))).toEqual({
      kind: 'handoff',
      tool: 'delegate_a',
      reason: '',
      target: 'agent-id-alice',
    });
  });

  it.each([
    ['empty arguments', ''],
    ['unparsable arguments', '{reason'],
    ['arguments that are not an object', '["why"]'],
    ['a reason that is not a string', '{"reason": 5}'],
  ])('reads no static reason from %s', (_label, args) => {
    const events: TurnEvent[] = [{ type: 'tool_call', callId: 'c1', name: 'delegate_a', arguments: args }];
    expect(resolveRouting(events, graphOf('delegate_a'), none)).toEqual({
      kind: 'handoff',
      tool: 'delegate_a',
      reason: '',
    });
  });
});
