import { TransitionGraphDictSchema } from '@ag2net/adapters';
import { describe, expect, it } from 'vitest';
import { ANY_NODE, END_NODE, edgePath, graphEdges, layoutGraph, pathTaken, spreadMarks } from './graph.js';

// The demo's graph as TransitionGraph.toDict() writes it: you → triage, tool transfer_to_billing → billing, else end.
const graph = TransitionGraphDictSchema.parse({
  initial_speaker: 'you1',
  transitions: [
    {
      when: { name: 'from_speaker', args: { agent_id: 'you1' } },
      then: { name: 'agent', args: { agent_id: 'tri' } },
      priority: 0,
    },
    {
      when: { name: 'tool_called', args: { tool_name: 'transfer_to_billing' } },
      then: { name: 'agent', args: { agent_id: 'bil' } },
      priority: 0,
    },
  ],
  default_target: { name: 'terminate', args: { reason: 'no_route' } },
  max_turns: 6,
});
const names: Record<string, string> = { you1: 'you', tri: 'triage', bil: 'billing' };
const context = { order: ['you1', 'tri', 'bil'], creatorId: 'you1', nameOf: (id: string) => names[id] ?? id };

describe('graphEdges', () => {
  it('labels each arrow by its condition, the default as otherwise, with a terminate reason', () => {
    expect(graphEdges(graph, context)).toEqual([
      { from: 'you1', to: 'tri', label: 'from you' },
      { from: ANY_NODE, to: 'bil', label: 'tool transfer_to_billing' },
      { from: ANY_NODE, to: END_NODE, label: 'otherwise · no_route' },
    ]);
  });

  it('follows priority, and draws stay, revert, round robin, a null then and context conditions', () => {
    const g = TransitionGraphDictSchema.parse({
      initial_speaker: 'tri',
      transitions: [
        { when: { name: 'context_equals', args: { key: 'tier', value: 'gold' } }, then: { name: 'stay' }, priority: 5 },
        {
          when: { name: 'from_speaker', args: { agent_id: 'bil' } },
          then: { name: 'revert_to_initiator' },
          priority: 1,
        },
        { when: { name: 'from_speaker', args: { agent_id: 'tri' } }, then: { name: 'round_robin' }, priority: 2 },
        { when: { name: 'always' }, then: null, priority: 9 },
      ],
    });
    expect(graphEdges(g, context)).toEqual([
      { from: 'bil', to: 'you1', label: 'from billing · back to initiator' },
      { from: 'tri', to: 'bil', label: 'from triage · round robin' },
      { from: ANY_NODE, to: ANY_NODE, label: 'tier = gold · stay' },
      { from: ANY_NODE, to: END_NODE, label: 'always' },
      { from: ANY_NODE, to: END_NODE, label: 'otherwise' },
    ]);
  });
});

describe('layoutGraph', () => {
  it('puts any speaker first, the initial speaker next, then the others in order, the end last, in one row', () => {
    const layout = layoutGraph(graph, context);
    expect(layout.nodes.map((n) => n.id)).toEqual([ANY_NODE, 'you1', 'tri', 'bil', END_NODE]);
    expect(new Set(layout.nodes.map((n) => n.y)).size).toBe(1);
    // Forward arcs only: room above the row, none below.
    expect(layout.nodes[0]?.y).toBe(24 + 64);
    expect(layout.height).toBe(24 + 64 + 40 + 24);
    const xs = layout.nodes.map((n) => n.x);
    expect(xs).toEqual([...xs].sort((a, b) => a - b));
    expect(layout.width).toBe(24 * 2 + 5 * 120 + 4 * 70);
  });

  it('draws neighbours straight and longer edges as arcs clear of the row', () => {
    const layout = layoutGraph(graph, context);
    const [any, you, tri, , end] = layout.nodes;
    if (any === undefined || you === undefined || tri === undefined || end === undefined) throw new Error('layout');
    expect(edgePath(you, tri).d).toBe(`M ${you.x + 120} ${you.y + 20} L ${tri.x} ${tri.y + 20}`);
    const arc = edgePath(any, end);
    expect(arc.d.startsWith(`M ${any.x + 60} ${any.y} Q`)).toBe(true);
    expect(arc.labelY).toBeLessThan(any.y);
    expect(edgePath(end, any).labelY).toBeGreaterThan(any.y + 40);
  });

  it('keeps the marks of the edges leaving any speaker apart (tool → billing, otherwise → end)', () => {
    const layout = layoutGraph(graph, context);
    const [any, , , bil, end] = layout.nodes;
    if (any === undefined || bil === undefined || end === undefined) throw new Error('layout');
    const toBilling = edgePath(any, bil);
    const toEnd = edgePath(any, end);
    // Halfway along each arc, the longer one higher: 3 and 4 node-steps, lifts 44 and 52 (capped at 64 - 12).
    expect([toBilling.labelX, toBilling.labelY]).toEqual([(any.x + bil.x) / 2 + 60, any.y - 44]);
    expect([toEnd.labelX, toEnd.labelY]).toEqual([(any.x + end.x) / 2 + 60, any.y - 52]);
    expect(Math.abs(toEnd.labelX - toBilling.labelX)).toBe(95);
    // Every arc stays inside the room above the row.
    expect(Math.min(...layout.nodes.map((n) => edgePath(any, n).labelY))).toBeGreaterThanOrEqual(24);
  });
});

describe('spreadMarks', () => {
  it('steps a mark right until it clears the ones before it', () => {
    expect(
      spreadMarks([
        { x: 100, y: 50 },
        { x: 100, y: 50 },
        { x: 110, y: 55 },
        { x: 100, y: 90 },
      ]),
    ).toEqual([
      { x: 100, y: 50 },
      { x: 122, y: 50 },
      { x: 154, y: 55 },
      { x: 100, y: 90 },
    ]);
  });
});

describe('pathTaken', () => {
  it('lists message senders in sequence order, each run once, skipping events', () => {
    const envelopes = [
      { sequence: 4, sender_id: 'tri', event_type: 'ag2.packet' },
      { sequence: 1, sender_id: 'hub', event_type: 'ag2.channel.invite' },
      { sequence: 2, sender_id: 'tri', event_type: 'ag2.channel.invite.ack' },
      { sequence: 3, sender_id: 'you1', event_type: 'ag2.msg.text' },
      { sequence: 5, sender_id: 'tri', event_type: 'ag2.msg.text' },
      { sequence: 6, sender_id: 'bil', event_type: 'ag2.msg.text' },
      { sequence: 7, sender_id: 'hub', event_type: 'ag2.expectation.violated' },
    ];
    expect(pathTaken(envelopes)).toEqual(['you1', 'tri', 'bil']);
    expect(pathTaken([])).toEqual([]);
  });
});
