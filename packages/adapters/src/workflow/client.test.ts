import { EV_CONTEXT_SET, EV_PACKET, EV_TEXT, createEnvelope, handoff } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import type { TurnEvent } from '../types.js';
import { WorkflowAdapter } from './adapter.js';
import { ToolCalled } from './conditions.js';
import { Transition, TransitionGraph } from './graph.js';
import { buildContextSetEnvelope } from './packet-text.js';
import { AgentTarget } from './targets.js';
import { CID, packetEnv, textEnv, workflowMetadata } from '../../test/workflow-helpers.js';

const adapter = new WorkflowAdapter();
const graph = new TransitionGraph({
  initialSpeaker: 'triage',
  transitions: [new Transition(new ToolCalled('transfer_to_eng'), new AgentTarget('eng'))],
});
const meta = workflowMetadata({ participants: ['triage', 'eng'], knobs: { graph: graph.toDict() } });
const state = adapter.initialState(meta);

function round(body: string, events: readonly TurnEvent[] = [], nameToId = new Map<string, string>()) {
  return adapter.buildRoundEnvelope({ metadata: meta, senderId: 'triage', reply: { body }, events, state, nameToId });
}

describe('WorkflowAdapter rendering', () => {
  it('renders a handoff packet as the handoff line then the body', () => {
    const env = packetEnv('a', { routing: { kind: 'handoff', tool: 'transfer', reason: 'bug' }, body: 'see log' });
    expect(adapter.renderEnvelope(env)).toBe('[Handed off via transfer] bug\nsee log');
    expect(adapter.extractTurnInput(env)).toBe('[Handed off via transfer] bug\nsee log');
  });

  it('differs between render and extract for a handoff without tool or reason, as AG2 does', () => {
    const env = packetEnv('a', { routing: { kind: 'handoff', target: 'b' } });
    expect(adapter.renderEnvelope(env)).toBe('[Handed off via ]');
    expect(adapter.extractTurnInput(env)).toBe('[Handed off via handoff]');
    const noReason = packetEnv('a', { routing: { kind: 'handoff', tool: 't' } });
    expect(adapter.renderEnvelope(noReason)).toBe('[Handed off via t]');
    expect(adapter.extractTurnInput(noReason)).toBe('[Handed off via t]');
  });

  it('renders a text or finish packet as its body, and an empty one as nothing', () => {
    expect(adapter.renderEnvelope(packetEnv('a', { routing: { kind: 'text' }, body: 'hello' }))).toBe('hello');
    expect(adapter.renderEnvelope(packetEnv('a', { routing: { kind: 'finish', reason: 'x' }, body: 'bye' }))).toBe(
      'bye',
    );
    expect(adapter.renderEnvelope(packetEnv('a', { routing: { kind: 'text' }, body: '' }))).toBeNull();
    expect(adapter.extractTurnInput(packetEnv('a', { routing: { kind: 'text' }, body: '' }))).toBeNull();
  });

  it("prints non-string routing fields as Python's str() and ignores a non-string body", () => {
    const env = packetEnv('a', { routing: { kind: 'handoff', tool: null, reason: 3 }, body: 42 });
    expect(adapter.renderEnvelope(env)).toBe('[Handed off via None] 3');
    expect(adapter.extractTurnInput(env)).toBe('[Handed off via None] 3');
  });

  it('renders EV_TEXT by the default and nothing else', () => {
    expect(adapter.renderEnvelope(textEnv('a', 'plain'))).toBe('plain');
    expect(adapter.extractTurnInput(textEnv('a', 'plain'))).toBe('plain');
    const other = createEnvelope({
      channel_id: CID,
      sender_id: 'a',
      event_type: EV_CONTEXT_SET,
      event_data: { set: {} },
    });
    expect(adapter.renderEnvelope(other)).toBeNull();
    expect(adapter.extractTurnInput(other)).toBeNull();
  });
});

describe('WorkflowAdapter envelope builders', () => {
  it('ends a silent round (text routing, empty body) without an envelope', () => {
    expect(round('')).toBeNull();
    expect(round('', [{ type: 'tool_call', callId: 'c1', name: 'unwatched', arguments: '{}' }])).toBeNull();
  });

  it('ends a round with a broadcast packet carrying routing, empty context updates and the body', () => {
    const env = round('done here');
    expect(env).toMatchObject({
      channel_id: CID,
      sender_id: 'triage',
      audience: null,
      event_type: EV_PACKET,
      event_data: { routing: { kind: 'text' }, context_updates: { set: {}, delete: [] }, body: 'done here' },
    });
  });

  it('sends a packet for a routing-only round with an empty body', () => {
    const events: TurnEvent[] = [
      { type: 'tool_call', callId: 'c1', name: 'transfer_to_eng', arguments: '{"reason": "bug"}' },
    ];
    expect(round('', events)?.event_data).toEqual({
      routing: { kind: 'handoff', tool: 'transfer_to_eng', reason: 'bug' },
      context_updates: { set: {}, delete: [] },
      body: '',
    });
  });

  it('resolves a dynamic handoff name to an id through nameToId', () => {
    const events: TurnEvent[] = [
      { type: 'tool_call', callId: 'c1', name: 'route', arguments: '{}' },
      { type: 'tool_result', callId: 'c1', result: handoff('Engineer', 'needs code') },
    ];
    expect(round('', events, new Map([['Engineer', 'eng']]))?.event_data['routing']).toEqual({
      kind: 'handoff',
      tool: 'route',
      reason: 'needs code',
      target: 'eng',
    });
  });

  it('routes a round as text when the state holds no graph', () => {
    const events: TurnEvent[] = [{ type: 'tool_call', callId: 'c1', name: 'transfer_to_eng', arguments: '{}' }];
    const input = {
      metadata: meta,
      senderId: 'triage',
      reply: { body: '' },
      events,
      nameToId: new Map<string, string>(),
    };
    expect(adapter.buildRoundEnvelope({ ...input, state: { ...state, graph_data: {} } })).toBeNull();
    expect(adapter.buildRoundEnvelope({ ...input, state: { ...state, graph_data: { bad: true } } })).toBeNull();
  });

  it('builds a packet with a handoff routing (test_adapter_tools)', () => {
    const env = adapter.buildPacketEnvelope('c1', 'a1', {
      body: 'result',
      handoff: { target: 'a2', reason: 'needs expert' },
    });
    expect(env.event_type).toBe(EV_PACKET);
    expect(env.event_data['body']).toBe('result');
    expect(env.event_data['routing']).toEqual({ kind: 'handoff', target: 'a2', reason: 'needs expert' });
  });

  it('writes packet context changes as context_updates, which fold applies (AG2 wrote an unread "context")', () => {
    const env = adapter.buildPacketEnvelope(CID, 'triage', { body: 'r', contextSet: { score: 0.9 } });
    expect(env.event_data['context_updates']).toEqual({ set: { score: 0.9 }, delete: [] });
    expect(env.event_data['context']).toBeUndefined();
    expect(adapter.fold(env, state).context_vars).toEqual({ score: 0.9 });
  });

  it('builds a plain text envelope', () => {
    const env = adapter.buildTextEnvelope('c1', 'a1', { text: 'hello', audience: ['a2'] });
    expect([env.event_type, env.event_data, env.audience]).toEqual([EV_TEXT, { text: 'hello' }, ['a2']]);
  });

  it('builds a context change with both set and delete', () => {
    const env = buildContextSetEnvelope(CID, 'eng', { set: { k: 'v' } });
    expect([env.event_type, env.event_data, env.sender_id]).toEqual([
      EV_CONTEXT_SET,
      { set: { k: 'v' }, delete: [] },
      'eng',
    ]);
    expect(buildContextSetEnvelope(CID, 'eng', { delete: ['k'] }).event_data).toEqual({ set: {}, delete: ['k'] });
  });

  it('offers no tools', () => {
    expect(adapter.toolsFor()).toEqual([]);
  });
});
