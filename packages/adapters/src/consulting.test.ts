import { ChannelMetadataSchema, EV_CHANNEL_OPENED, EV_TEXT, ParticipantRole } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { channelFor, event, expectProtocolError, foldAll, text } from '../test/helpers.js';
import { ConsultingAdapter, type ConsultingState } from './consulting.js';

const adapter = new ConsultingAdapter();
const meta = channelFor(adapter, { creator: 'alice', others: ['bob'] });
const asked = foldAll(adapter, meta, [text('alice', 'Hello bob, can you help?', 'e1')]);
const done = foldAll(adapter, meta, [text('alice', 'q', 'e1'), text('bob', 'a', 'e2')]);

describe('ConsultingAdapter manifest', () => {
  it('is consulting@v1 for exactly two parties with AG2 default expectations and full transcript view', () => {
    expect(adapter.manifest).toEqual({
      type: 'consulting',
      version: 1,
      participants: { min: 2, max: 2, roles: ['initiator', 'respondent'] },
      knobs_schema: {},
      default_view_policy: 'full_transcript',
      expectations: [
        {
          name: 'acks_within',
          on_violation: 'auto_close',
          params: { seconds: 30 },
          applies_to: null,
        },
        {
          name: 'reply_within',
          on_violation: 'auto_close',
          params: { seconds: 600 },
          applies_to: null,
        },
      ],
    });
    expect(adapter.defaultViewPolicy()).toEqual({ name: 'full_transcript' });
  });
});

describe('ConsultingAdapter.validateCreate', () => {
  it('rejects three participants because the third is not a respondent', () => {
    const three = channelFor(adapter, {
      creator: 'alice',
      others: ['bob', 'carol'],
    });
    expectProtocolError(() => adapter.validateCreate(three), 'consulting requires exactly one respondent');
  });

  it('rejects roles initiator and participant with the respondent message', () => {
    const bad = ChannelMetadataSchema.parse({
      ...meta,
      participants: [
        { agent_id: 'alice', role: ParticipantRole.Initiator, order: 0 },
        { agent_id: 'bob', role: ParticipantRole.Participant, order: 1 },
      ],
    });
    expectProtocolError(() => adapter.validateCreate(bad), 'consulting requires exactly one respondent');
  });

  it('rejects a channel without an initiator', () => {
    const bad = ChannelMetadataSchema.parse({
      ...meta,
      participants: [{ agent_id: 'bob', role: ParticipantRole.Respondent, order: 0 }],
    });
    expectProtocolError(() => adapter.validateCreate(bad), 'consulting requires exactly one initiator');
  });

  it('rejects a third party even when the roles are present', () => {
    const bad = ChannelMetadataSchema.parse({
      ...meta,
      participants: [
        { agent_id: 'alice', role: ParticipantRole.Initiator, order: 0 },
        { agent_id: 'bob', role: ParticipantRole.Respondent, order: 1 },
        { agent_id: 'carol', role: ParticipantRole.Participant, order: 2 },
      ],
    });
    expectProtocolError(() => adapter.validateCreate(bad), 'consulting requires exactly 2 participants, got 3');
  });

  it('accepts an initiator and a respondent', () => {
    expect(() => adapter.validateCreate(meta)).not.toThrow();
  });
});

describe('ConsultingAdapter turn order', () => {
  it('rejects the respondent speaking first', () => {
    expectProtocolError(
      () => adapter.validateSend(meta, text('bob', 'hi', 'x'), adapter.initialState()),
      "consulting channel 'c1' expects first send from initiator 'alice', got 'bob'",
    );
  });

  it('rejects the initiator speaking twice before the reply', () => {
    expectProtocolError(
      () => adapter.validateSend(meta, text('alice', 'again', 'x'), asked),
      "consulting channel 'c1' expects reply from respondent 'bob', got 'alice'",
    );
  });

  it('rejects any text after the reply because the consultation is complete', () => {
    const complete: ConsultingState = {
      initiator_sent: true,
      respondent_replied: true,
      last_envelope_id: 'e2',
    };
    expectProtocolError(
      () => adapter.validateSend(meta, text('alice', 'more', 'x'), complete),
      "consulting channel 'c1' already complete",
    );
  });

  it('rejects a reply when the channel has no respondent', () => {
    const noRespondent = ChannelMetadataSchema.parse({
      ...meta,
      participants: [{ agent_id: 'alice', role: ParticipantRole.Initiator, order: 0 }],
    });
    expectProtocolError(
      () => adapter.validateSend(noRespondent, text('bob', 'a', 'x'), asked),
      "consulting channel 'c1' has no respondent",
    );
  });

  it('lets protocol and custom events through whatever the turn', () => {
    expect(() => adapter.validateSend(meta, event('bob', EV_CHANNEL_OPENED, 'x'), done)).not.toThrow();
    expect(() => adapter.validateSend(meta, event('bob', 'acme.note', 'x'), adapter.initialState())).not.toThrow();
  });
});

describe('ConsultingAdapter fold and completion', () => {
  it('marks the question then the reply and ignores later texts', () => {
    expect(asked).toEqual({
      initiator_sent: true,
      respondent_replied: false,
      last_envelope_id: 'e1',
    });
    expect(done).toEqual({
      initiator_sent: true,
      respondent_replied: true,
      last_envelope_id: 'e2',
    });
    expect(adapter.fold(text('alice', 'late', 'e3'), done)).toBe(done);
  });

  it('ignores non-text events', () => {
    const s = adapter.initialState();
    expect(adapter.fold(event('alice', EV_CHANNEL_OPENED, 'o'), s)).toBe(s);
  });

  it('gives equal states when the same log is folded twice', () => {
    const log = [event('alice', EV_CHANNEL_OPENED, 'o'), text('alice', 'q', 'e1'), text('bob', 'a', 'e2')];
    expect(foldAll(adapter, meta, log)).toEqual(foldAll(adapter, meta, log));
  });

  it('closes through closing with consulting_complete once both have spoken', () => {
    expect(adapter.onAccepted(meta, text('bob', 'a', 'e2'), done)).toEqual({
      nextState: 'closing',
      autoCloseReason: 'consulting_complete',
    });
    expect(adapter.onAccepted(meta, text('alice', 'q', 'e1'), asked)).toEqual({
      nextState: null,
      autoCloseReason: '',
    });
    expect(adapter.onAccepted(meta, event('bob', 'acme.note', 'x'), done).nextState).toBeNull();
  });
});

describe('ConsultingAdapter expectedNext and tools', () => {
  it('expects the initiator, then the respondent, then nobody', () => {
    expect(adapter.expectedNext(meta, adapter.initialState())).toEqual({
      agentId: 'alice',
      triggeringEnvelopeId: null,
    });
    expect(adapter.expectedNext(meta, asked)).toEqual({
      agentId: 'bob',
      triggeringEnvelopeId: 'e1',
    });
    expect(adapter.expectedNext(meta, done)).toBeNull();
  });

  it('offers say to the initiator before the question and to the respondent until the reply', () => {
    const names = (s: ConsultingState | null, who: string) => adapter.toolsFor(meta, s, who).map((t) => t.name);
    expect(names(null, 'alice')).toEqual(['say']);
    expect(names(null, 'bob')).toEqual([]);
    expect(names(asked, 'alice')).toEqual([]);
    expect(names(asked, 'bob')).toEqual(['say']);
    expect(names(done, 'bob')).toEqual([]);
  });

  it('builds a broadcast text round envelope and none for an empty reply', () => {
    const round = adapter.buildRoundEnvelope({
      metadata: meta,
      senderId: 'bob',
      reply: { body: '4' },
      events: [],
      state: asked,
      nameToId: new Map(),
    });
    expect(round).toMatchObject({
      channel_id: 'c1',
      sender_id: 'bob',
      event_type: EV_TEXT,
      event_data: { text: '4' },
      audience: null,
    });
    const silent = adapter.buildRoundEnvelope({
      metadata: meta,
      senderId: 'bob',
      reply: { body: '' },
      events: [],
      state: asked,
      nameToId: new Map(),
    });
    expect(silent).toBeNull();
  });

  it('renders text envelopes and nothing else', () => {
    expect(adapter.renderEnvelope(text('a', 'hello', 'e'))).toBe('hello');
    expect(adapter.extractTurnInput(text('a', 'hello', 'e'))).toBe('hello');
    expect(adapter.renderEnvelope(event('a', EV_CHANNEL_OPENED, 'e'))).toBeNull();
    expect(adapter.renderEnvelope(event('a', EV_TEXT, 'e', { text: 42 }))).toBeNull();
  });
});
