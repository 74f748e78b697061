import {
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_OPENED,
  EV_CONTEXT_SET,
  EV_PACKET,
  EV_TASK_CANCEL_REQUEST,
  EV_TEXT,
  ProtocolError,
  createEnvelope,
  type ChannelMetadata,
  type Envelope,
} from '@ag2net/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConsultingAdapter } from '../src/consulting.js';
import { ConversationAdapter } from '../src/conversation.js';
import { DiscussionAdapter } from '../src/discussion.js';
import { ContextEquals, FromSpeaker, ToolCalled } from '../src/workflow/conditions.js';
import { Transition, TransitionGraph } from '../src/workflow/graph.js';
import { WorkflowAdapter } from '../src/workflow/adapter.js';
import { AgentTarget, RevertToInitiatorTarget, RoundRobinTarget, TerminateTarget } from '../src/workflow/targets.js';
import type { AdapterState, ChannelAdapter } from '../src/types.js';
import { channelFor } from './helpers.js';

/** One adapter under test with a channel it can run. */
interface PropertyCase {
  readonly name: string;
  readonly adapter: ChannelAdapter;
  readonly metadata: ChannelMetadata;
}

const PARTICIPANTS = ['alice', 'bob', 'carol'];

const CASES: readonly PropertyCase[] = [
  { name: 'consulting', adapter: new ConsultingAdapter(), metadata: two(new ConsultingAdapter()) },
  { name: 'conversation', adapter: new ConversationAdapter(), metadata: two(new ConversationAdapter()) },
  {
    name: 'discussion',
    adapter: new DiscussionAdapter(),
    metadata: channelFor(new DiscussionAdapter(), { creator: 'alice', others: ['bob', 'carol'] }),
  },
  {
    name: 'workflow',
    adapter: new WorkflowAdapter(),
    metadata: channelFor(new WorkflowAdapter(), {
      creator: 'alice',
      others: ['bob', 'carol'],
      knobs: { graph: workflowGraph().toDict(), context_vars: { stage: 'start' } },
    }),
  },
];

/** A graph that exercises every kind of routing: tool calls, speakers, context, round robin and termination. */
function workflowGraph(): TransitionGraph {
  return new TransitionGraph({
    initialSpeaker: 'alice',
    transitions: [
      new Transition(new ToolCalled('escalate'), new AgentTarget('carol')),
      new Transition(new ContextEquals('stage', 'done'), new TerminateTarget('stage_done'), -1),
      new Transition(new FromSpeaker('carol'), new RevertToInitiatorTarget()),
    ],
    defaultTarget: new RoundRobinTarget(),
    maxTurns: 25,
  });
}

function two(adapter: ChannelAdapter): ChannelMetadata {
  return channelFor(adapter, { creator: 'alice', others: ['bob'] });
}

/** Event types that may change some adapter's state; every other type must leave it as it is. */
const SUBSTANTIVE = new Set([EV_TEXT, EV_PACKET, EV_CONTEXT_SET]);

const senderArb = fc.constantFrom(...PARTICIPANTS, 'mallory');
const knownTypeArb = fc.constantFrom(
  EV_TEXT,
  EV_TEXT,
  EV_TEXT,
  EV_PACKET,
  EV_CONTEXT_SET,
  EV_CHANNEL_OPENED,
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_CLOSED,
  EV_TASK_CANCEL_REQUEST,
  'acme.custom',
);
const packetDataArb = fc.oneof(
  fc.constant({ body: 'b', routing: { kind: 'text' } }),
  fc.record({
    body: fc.string(),
    routing: fc.record({ kind: fc.constant('handoff'), target: fc.constantFrom(...PARTICIPANTS, 'ghost') }),
  }),
  fc.record({ routing: fc.record({ kind: fc.constant('finish'), reason: fc.string() }) }),
  fc.record({ context_updates: fc.record({ set: fc.dictionary(fc.string(), fc.jsonValue()) }) }),
  fc.record({
    body: fc.string(),
    routing: fc.record({ kind: fc.constant('handoff'), tool: fc.constantFrom('escalate', 'other') }),
    context_updates: fc.record({
      set: fc.record({ stage: fc.constantFrom('start', 'done') }),
      delete: fc.constant([]),
    }),
  }),
);
const dataArb = fc.oneof(
  fc.record({ text: fc.string() }),
  packetDataArb,
  fc.record({ set: fc.dictionary(fc.string(), fc.jsonValue()), delete: fc.array(fc.string()) }),
  fc.dictionary(fc.string(), fc.jsonValue()),
);
const sendArb = fc.record({ sender: senderArb, eventType: knownTypeArb, data: dataArb });
const hostileArb = fc.record({
  sender: senderArb,
  eventType: fc.oneof(fc.string({ minLength: 1 }), knownTypeArb),
  data: fc.dictionary(fc.string(), fc.jsonValue()),
});

type Send = { sender: string; eventType: string; data: Record<string, unknown> };

function envelopeOf(send: Send, index: number): Envelope {
  return createEnvelope({
    channel_id: 'c1',
    sender_id: send.sender,
    event_type: send.eventType,
    event_data: send.data,
    envelope_id: `e${String(index).padStart(4, '0')}`,
    created_at: '2026-01-01T00:00:00.000Z',
    sequence: index + 1,
  });
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** Runs `sends` through validate → fold the way the hub admits them; returns the admitted log and final state. */
function admit(c: PropertyCase, sends: readonly Send[]): { log: Envelope[]; state: AdapterState } {
  let state = deepFreeze(c.adapter.initialState(c.metadata));
  const log: Envelope[] = [];
  for (const [i, send] of sends.entries()) {
    const env = deepFreeze(envelopeOf(send, i));
    const before = structuredClone(state);
    try {
      c.adapter.validateSend(c.metadata, env, state);
    } catch (err) {
      expect(err).toBeInstanceOf(ProtocolError);
      expect(state).toEqual(before);
      continue;
    }
    log.push(env);
    state = deepFreeze(c.adapter.fold(env, state));
    c.adapter.onAccepted(c.metadata, env, state);
  }
  return { log, state };
}

describe.each(CASES)('$name adapter properties', (c) => {
  it('rejects only with ProtocolError and a rejected send leaves the state as it was', () => {
    fc.assert(
      fc.property(fc.array(sendArb, { maxLength: 40 }), (sends) => {
        admit(c, sends);
      }),
      { numRuns: 300 },
    );
  });

  it('gives equal states when the admitted log is folded again, also after a JSON round trip', () => {
    fc.assert(
      fc.property(fc.array(sendArb, { maxLength: 40 }), (sends) => {
        const { log, state } = admit(c, sends);
        const refold = log.reduce((s, env) => c.adapter.fold(env, s), c.adapter.initialState(c.metadata));
        expect(refold).toEqual(state);
        const hydrated = (JSON.parse(JSON.stringify(log)) as Envelope[]).reduce(
          (s, env) => c.adapter.fold(env, s),
          c.adapter.initialState(c.metadata),
        );
        expect(hydrated).toEqual(state);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws from fold and never mutates its inputs, whatever the event type and data', () => {
    fc.assert(
      fc.property(fc.array(hostileArb, { maxLength: 30 }), (sends) => {
        let state = deepFreeze(c.adapter.initialState(c.metadata));
        for (const [i, send] of sends.entries()) {
          const next = deepFreeze(c.adapter.fold(deepFreeze(envelopeOf(send, i)), state));
          if (!SUBSTANTIVE.has(send.eventType)) expect(next).toEqual(state);
          state = next;
        }
      }),
      { numRuns: 300 },
    );
  });
});
