import { EV_CHANNEL_OPENED } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { channelFor, event, expectProtocolError, foldAll, text } from '../test/helpers.js';
import { DiscussionAdapter } from './discussion.js';

const adapter = new DiscussionAdapter();
const meta = channelFor(adapter, { creator: 'alice', others: ['bob', 'carol'] });

describe('DiscussionAdapter creation', () => {
  it('is discussion@v1 with turn_within warn/hide expectations', () => {
    expect(adapter.manifest.type).toBe('discussion');
    expect(adapter.manifest.participants).toEqual({ min: 2, max: null, roles: [] });
    expect(adapter.manifest.knobs_schema).toEqual({ ordering: 'str' });
    expect(adapter.manifest.expectations.map((e) => [e.name, e.on_violation, e.params])).toEqual([
      ['turn_within', 'warn', { seconds: 120 }],
      ['turn_within', 'hide', { seconds: 600 }],
    ]);
  });

  it('rejects an ordering other than round_robin', () => {
    const weighted = channelFor(adapter, { creator: 'alice', others: ['bob'], knobs: { ordering: 'weighted' } });
    expectProtocolError(
      () => adapter.validateCreate(weighted),
      "discussion knobs.ordering='weighted' not supported; choose from ['round_robin']",
    );
    const dynamic = channelFor(adapter, { creator: 'alice', others: ['bob'], knobs: { ordering: 'dynamic' } });
    expectProtocolError(
      () => adapter.validateCreate(dynamic),
      "discussion knobs.ordering='dynamic' not supported; choose from ['round_robin']",
    );
  });

  it('rejects a non-string ordering knob', () => {
    const numeric = channelFor(adapter, { creator: 'alice', others: ['bob'], knobs: { ordering: 5 } });
    expectProtocolError(
      () => adapter.validateCreate(numeric),
      "discussion knobs.ordering=5 not supported; choose from ['round_robin']",
    );
  });

  it('rejects a single participant', () => {
    const solo = channelFor(adapter, { creator: 'alice', others: [] });
    expectProtocolError(() => adapter.validateCreate(solo), 'discussion requires at least 2 participants, got 1');
  });

  it('accepts explicit round_robin and the default ordering', () => {
    expect(() => adapter.validateCreate(meta)).not.toThrow();
    const explicit = channelFor(adapter, { creator: 'alice', others: ['bob'], knobs: { ordering: 'round_robin' } });
    expect(() => adapter.validateCreate(explicit)).not.toThrow();
  });

  it('starts with the creator expected and the participants in order', () => {
    const five = channelFor(adapter, { creator: 'alice', others: ['bob', 'carol', 'dave', 'erin'] });
    expect(adapter.initialState(five)).toEqual({
      participant_order: ['alice', 'bob', 'carol', 'dave', 'erin'],
      expected_next_speaker: 'alice',
      last_speaker_id: null,
      last_envelope_id: null,
      turn_count: 0,
    });
    expect(adapter.expectedNext(five, adapter.initialState(five))).toEqual({
      agentId: 'alice',
      triggeringEnvelopeId: null,
    });
  });
});

describe('DiscussionAdapter rotation', () => {
  it('passes the turn alice → bob → carol → alice', () => {
    const log = [text('alice', 'a', 'e1'), text('bob', 'b', 'e2'), text('carol', 'c', 'e3')];
    const expected: (string | null)[] = [];
    log.reduce((s, env) => {
      const next = adapter.fold(env, s);
      expected.push(next.expected_next_speaker);
      return next;
    }, adapter.initialState(meta));
    expect(expected).toEqual(['bob', 'carol', 'alice']);
    expect(foldAll(adapter, meta, log)).toMatchObject({
      turn_count: 3,
      last_speaker_id: 'carol',
      last_envelope_id: 'e3',
    });
  });

  it('rejects a speaker out of turn', () => {
    expectProtocolError(
      () => adapter.validateSend(meta, text('carol', 'me first', 'x'), adapter.initialState(meta)),
      "discussion channel 'c1' expects 'alice' to speak, got 'carol'",
    );
    const two = channelFor(adapter, { creator: 'alice', others: ['bob'] });
    expectProtocolError(
      () => adapter.validateSend(two, text('bob', 'b', 'x'), adapter.initialState(two)),
      "discussion channel 'c1' expects 'alice' to speak, got 'bob'",
    );
  });

  it('leaves the state unchanged for an unknown sender and for non-text events', () => {
    const s = adapter.initialState(meta);
    expect(adapter.fold(text('mallory', 'x', 'e1'), s)).toBe(s);
    expect(adapter.fold(event('alice', EV_CHANNEL_OPENED, 'o'), s)).toBe(s);
  });

  it('expects the next speaker with the last text as trigger', () => {
    const s = foldAll(adapter, meta, [text('alice', 'a', 'e1')]);
    expect(adapter.expectedNext(meta, s)).toEqual({ agentId: 'bob', triggeringEnvelopeId: 'e1' });
  });

  it('never closes by itself', () => {
    const s = foldAll(adapter, meta, [text('alice', 'a', 'e1')]);
    expect(adapter.onAccepted(meta, text('bob', 'b', 'e2'), s)).toEqual({ nextState: null, autoCloseReason: '' });
  });

  it('offers no say tool, since the round reply already takes the turn', () => {
    expect(adapter.toolsFor(meta, adapter.initialState(meta), 'alice')).toEqual([]);
  });

  it('uses a named windowed view of max(2N, 4) envelopes', () => {
    expect(adapter.defaultViewPolicy(meta)).toEqual({ name: 'named_windowed_summary', recentN: 6 });
    const two = channelFor(adapter, { creator: 'alice', others: ['bob'] });
    expect(adapter.defaultViewPolicy(two)).toEqual({ name: 'named_windowed_summary', recentN: 4 });
  });
});
