import { createDefaultAdapterRegistry, type AdapterState } from '@ag2net/adapters';
import { buildParticipants } from '@ag2net/adapters/internal';
import {
  ChannelMetadataSchema,
  EV_CHANNEL_INVITE,
  EV_CHANNEL_OPENED,
  EV_EXPECTATION_VIOLATED,
  EV_TASK_CANCEL_REQUEST,
  EV_TEXT,
  ExpectationSchema,
  createEnvelope,
  type ChannelMetadata,
  type ChannelState,
  type Envelope,
  type EnvelopeInput,
} from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { acksWithin, maxSilence, replyWithin, turnWithin, type ExpectationEvaluator } from './evaluators.js';
import { foldFacts, newFacts, type ChannelFacts } from './facts.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const at = (seconds: number): string => new Date(T0 + seconds * 1000).toISOString();
const adapters = createDefaultAdapterRegistry();

interface Channel {
  metadata: ChannelMetadata;
  state: AdapterState | null;
  readonly facts: ChannelFacts;
}

function channel(type: string, others: readonly string[], state: ChannelState, pending: string[] = []): Channel {
  const adapter = adapters.get(type, 1);
  const metadata = ChannelMetadataSchema.parse({
    channel_id: 'c1',
    manifest: adapter.manifest,
    creator_id: 'alice',
    participants: buildParticipants('alice', others, at(0)),
    state,
    created_at: at(0),
    pending_acks: pending,
  });
  return { metadata, state: adapter.initialState(metadata), facts: newFacts() };
}

let seq = 0;
/** Admits an envelope into the channel at `seconds` after T0, as the hub does: adapter fold, then facts. */
function feed(c: Channel, seconds: number, input: Omit<EnvelopeInput, 'channel_id'>): Envelope {
  seq += 1;
  const envelope = createEnvelope({
    channel_id: 'c1',
    ...input,
    envelope_id: `e${seq}`,
    created_at: at(seconds),
    sequence: seq,
  });
  const adapter = adapters.get(c.metadata.manifest.type, 1);
  if (c.state !== null) c.state = adapter.fold(envelope, c.state);
  foldFacts({ facts: c.facts, metadata: c.metadata, adapter, state: c.state }, envelope);
  return envelope;
}

function sayAt(c: Channel, seconds: number, sender: string, audience: string[] | null = null): Envelope {
  return feed(c, seconds, { sender_id: sender, audience, event_type: EV_TEXT, event_data: { text: 'x' } });
}

function evaluate(evaluator: ExpectationEvaluator, c: Channel, seconds: number, params: Record<string, unknown>) {
  const expectation = ExpectationSchema.parse({ name: evaluator.name, on_violation: 'audit', params });
  return evaluator.evaluate(expectation, {
    metadata: c.metadata,
    state: c.state,
    facts: c.facts,
    nowMs: T0 + seconds * 1000,
  });
}

describe('acks_within', () => {
  it('flags the invitees still pending once the threshold has passed', () => {
    const c = channel('consulting', ['bob'], 'pending', ['bob']);
    expect(evaluate(acksWithin, c, 60, { seconds: 30 })).toEqual({
      violators: ['bob'],
      detail: { elapsed_seconds: 60, threshold_seconds: 30 },
    });
  });

  it('fires at exactly the threshold and is silent a millisecond before', () => {
    const c = channel('consulting', ['bob'], 'pending', ['bob']);
    expect(evaluate(acksWithin, c, 29.999, { seconds: 30 })).toBeNull();
    expect(evaluate(acksWithin, c, 30, { seconds: 30 })?.violators).toEqual(['bob']);
  });

  it('is silent within a longer threshold, with nobody pending, and once the channel is active', () => {
    expect(evaluate(acksWithin, channel('consulting', ['bob'], 'pending', ['bob']), 30, { seconds: 60 })).toBeNull();
    expect(evaluate(acksWithin, channel('consulting', ['bob'], 'pending'), 60, { seconds: 30 })).toBeNull();
    expect(evaluate(acksWithin, channel('consulting', ['bob'], 'active', ['bob']), 60, { seconds: 30 })).toBeNull();
  });

  it('fires at once with seconds 0, and defaults to 30 seconds', () => {
    const c = channel('consulting', ['bob'], 'pending', ['bob']);
    expect(evaluate(acksWithin, c, 0, { seconds: 0 })?.detail).toEqual({ elapsed_seconds: 0, threshold_seconds: 0 });
    expect(evaluate(acksWithin, c, 29, {})).toBeNull();
    expect(evaluate(acksWithin, c, 30, {})?.detail).toEqual({ elapsed_seconds: 30, threshold_seconds: 30 });
  });

  it('refuses a threshold that is not a non-negative number', () => {
    const c = channel('consulting', ['bob'], 'pending', ['bob']);
    expect(() => evaluate(acksWithin, c, 60, { seconds: '30s' })).toThrow(
      new TypeError(`expectation 'acks_within' has invalid params.seconds: '30s'`),
    );
  });
});

describe('reply_within', () => {
  it('flags the addressee of an unanswered text once the threshold has passed', () => {
    const c = channel('conversation', ['bob'], 'active');
    sayAt(c, 0, 'alice');
    expect(evaluate(replyWithin, c, 120, { seconds: 60 })).toEqual({
      violators: ['bob'],
      detail: { threshold_seconds: 60 },
    });
  });

  it('is silent once the addressee replied, and then flags the other side when it does not answer', () => {
    const c = channel('conversation', ['bob'], 'active');
    sayAt(c, 0, 'alice');
    sayAt(c, 30, 'bob');
    expect(evaluate(replyWithin, c, 45, { seconds: 60 })).toBeNull();
    expect(evaluate(replyWithin, c, 600, { seconds: 60 })?.violators).toEqual(['alice']);
  });

  it('fires at exactly the threshold and is silent a millisecond before', () => {
    const c = channel('conversation', ['bob'], 'active');
    sayAt(c, 0, 'alice');
    expect(evaluate(replyWithin, c, 59.999, { seconds: 60 })).toBeNull();
    expect(evaluate(replyWithin, c, 60, { seconds: 60 })?.violators).toEqual(['bob']);
  });

  it('counts a text only for the audience it names, and lists violators in participant order', () => {
    const c = channel('discussion', ['bob', 'carol', 'dave'], 'active');
    sayAt(c, 0, 'alice', ['dave', 'bob']);
    expect(evaluate(replyWithin, c, 60, { seconds: 60 })?.violators).toEqual(['bob', 'dave']);
  });
});

describe('max_silence', () => {
  it('flags the channel as a whole once no content came for the threshold', () => {
    const c = channel('conversation', ['bob'], 'active');
    sayAt(c, 30, 'alice');
    expect(evaluate(maxSilence, c, 120, { seconds: 60 })).toEqual({
      violators: [],
      detail: { elapsed_seconds: 90, threshold_seconds: 60 },
    });
  });

  it('is silent while the last content is recent', () => {
    const c = channel('conversation', ['bob'], 'active');
    sayAt(c, 90, 'alice');
    expect(evaluate(maxSilence, c, 120, { seconds: 60 })).toBeNull();
  });

  it('fires at exactly the threshold, counting from creation when nothing was said, and at once with seconds 0', () => {
    const c = channel('conversation', ['bob'], 'active');
    expect(evaluate(maxSilence, c, 59.999, { seconds: 60 })).toBeNull();
    expect(evaluate(maxSilence, c, 60, { seconds: 60 })?.detail).toEqual({
      elapsed_seconds: 60,
      threshold_seconds: 60,
    });
    expect(evaluate(maxSilence, c, 0, { seconds: 0 })?.violators).toEqual([]);
  });

  it('does not count protocol events, task events or violation records as content', () => {
    const c = channel('conversation', ['bob'], 'active');
    sayAt(c, 10, 'alice');
    feed(c, 50, { sender_id: 'alice', event_type: EV_CHANNEL_OPENED, event_data: { channel_id: 'c1' } });
    feed(c, 55, { sender_id: 'alice', event_type: EV_TASK_CANCEL_REQUEST, event_data: { task_id: 't', reason: '' } });
    feed(c, 60, {
      sender_id: 'alice',
      audience: [],
      event_type: EV_EXPECTATION_VIOLATED,
      event_data: { expectation: 'x', violators: [], detail: {}, on_violation: 'audit', expectation_index: 0 },
    });
    expect(evaluate(maxSilence, c, 70, { seconds: 60 })?.detail).toEqual({
      elapsed_seconds: 60,
      threshold_seconds: 60,
    });
    feed(c, 65, { sender_id: 'bob', event_type: 'acme.custom', event_data: {} });
    expect(evaluate(maxSilence, c, 70, { seconds: 60 })).toBeNull();
  });
});

describe('turn_within', () => {
  const invite = () => ({
    channel_id: 'c1',
    manifest_type: 'discussion',
    manifest_version: 1,
    creator_id: 'alice',
    knobs: {},
    labels: {},
  });

  function discussion(): Channel {
    const c = channel('discussion', ['bob', 'carol'], 'pending');
    feed(c, 0, { sender_id: 'alice', audience: ['bob'], event_type: EV_CHANNEL_INVITE, event_data: invite() });
    feed(c, 5, { sender_id: 'alice', event_type: EV_CHANNEL_OPENED, event_data: { channel_id: 'c1' } });
    c.metadata = { ...c.metadata, state: 'active' };
    return c;
  }

  it('counts the opening turn from when the channel opened, firing at exactly the threshold', () => {
    const c = discussion();
    expect(evaluate(turnWithin, c, 124.999, { seconds: 120 })).toBeNull();
    expect(evaluate(turnWithin, c, 125, { seconds: 120 })).toEqual({
      violators: ['alice'],
      detail: { elapsed_seconds: 120, threshold_seconds: 120, triggering_envelope_id: null },
      scope: `turn:${c.facts.turn?.sequence}`,
    });
  });

  it('starts a new turn, with a new scope, when the expected speaker changes', () => {
    const c = discussion();
    const first = c.facts.turn?.sequence;
    const said = sayAt(c, 100, 'alice');
    expect(evaluate(turnWithin, c, 219, { seconds: 120 })).toBeNull();
    expect(evaluate(turnWithin, c, 220, { seconds: 120 })).toEqual({
      violators: ['bob'],
      detail: { elapsed_seconds: 120, threshold_seconds: 120, triggering_envelope_id: said.envelope_id },
      scope: `turn:${said.sequence}`,
    });
    expect(said.sequence).not.toBe(first);
  });

  it('hands the clock to the next speaker when the expected one is hidden', () => {
    const c = discussion();
    const hide = feed(c, 605, {
      sender_id: 'alice',
      audience: ['alice'],
      event_type: EV_EXPECTATION_VIOLATED,
      event_data: {
        expectation: 'turn_within',
        violators: ['alice'],
        detail: {},
        on_violation: 'hide',
        expectation_index: 1,
      },
    });
    expect(c.facts.turn).toEqual({
      agentId: 'bob',
      triggeringEnvelopeId: null,
      since: T0 + 605_000,
      sequence: hide.sequence,
    });
    expect(evaluate(turnWithin, c, 700, { seconds: 120 })).toBeNull();
  });

  it('never fires where nobody is expected', () => {
    const c = channel('conversation', ['bob'], 'active');
    sayAt(c, 0, 'alice');
    expect(evaluate(turnWithin, c, 10_000, { seconds: 1 })).toBeNull();
  });
});

describe('facts', () => {
  it('records fired keys from violation records and the first auto_close reason, and forgets both at the end', () => {
    const c = channel('conversation', ['bob'], 'active');
    feed(c, 1, {
      sender_id: 'alice',
      audience: [],
      event_type: EV_EXPECTATION_VIOLATED,
      event_data: {
        expectation: 'reply_within',
        violators: ['alice', 'bob'],
        detail: {},
        on_violation: 'auto_close',
        expectation_index: 1,
      },
    });
    expect([...c.facts.fired]).toEqual(['1/reply_within/alice/', '1/reply_within/bob/']);
    expect(c.facts.autoClose).toBe('expectation_violated:reply_within');
    feed(c, 2, { sender_id: 'alice', event_type: 'ag2.channel.closed', event_data: { reason: 'x', channel_id: 'c1' } });
    expect(c.facts.fired.size).toBe(0);
    expect(c.facts.autoClose).toBeNull();
  });
});
