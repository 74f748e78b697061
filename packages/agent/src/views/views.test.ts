import { createDefaultAdapterRegistry, defaultRenderEnvelope } from '@ag2net/adapters';
import { EV_CHANNEL_OPENED, createEnvelope } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { channelFor, text } from '../../test/fixtures.js';
import { toModelMessages } from './messages.js';
import { fullTranscript, namedTranscript, namedWindowedSummary, windowedSummary } from './policies.js';
import { viewFromSpec } from './spec.js';
import { defaultNameResolver, type ProjectOptions, type ViewPolicy } from './types.js';

const names: Record<string, string> = { alice: 'Alice', bob: 'Bob' };
const nameFor = (id: string): string => names[id] ?? id;
const as = (participantId: string, extra: Partial<ProjectOptions> = {}): ProjectOptions => ({
  participantId,
  renderEnvelope: defaultRenderEnvelope,
  ...extra,
});
const eight = (): ReturnType<typeof text>[] => Array.from({ length: 8 }, (_, i) => text('alice', `msg ${i}`));

describe('windowed summary (AG2 test_conversation)', () => {
  it('projects a short history for bob as requests from alice and his own messages', () => {
    const wal = [text('alice', 'hi'), text('bob', 'hello'), text('alice', "how's it going")];
    expect(windowedSummary(10).project(wal, as('bob'))).toEqual([
      { kind: 'request', text: 'hi' },
      { kind: 'message', text: 'hello' },
      { kind: 'request', text: "how's it going" },
    ]);
  });

  it('summarises all but the last recent_n messages, naming the speakers by id', () => {
    expect(windowedSummary(3).project(eight(), as('bob'))).toEqual([
      { kind: 'summary', summary: 'Earlier in this channel: 5 messages from alice.', eventCount: 5 },
      { kind: 'request', text: 'msg 5' },
      { kind: 'request', text: 'msg 6' },
      { kind: 'request', text: 'msg 7' },
    ]);
  });

  it('says "1 message" and lists several speakers sorted', async () => {
    const wal = [text('carol', 'a'), text('alice', 'b'), text('bob', 'c')];
    expect((await windowedSummary(1).project(wal.slice(1), as('bob')))[0]).toEqual({
      kind: 'summary',
      summary: 'Earlier in this channel: 1 message from alice.',
      eventCount: 1,
    });
    expect((await windowedSummary(1).project(wal, as('bob')))[0]).toEqual({
      kind: 'summary',
      summary: 'Earlier in this channel: 2 messages from alice, carol.',
      eventCount: 2,
    });
  });

  it('leaves out what the participant may not see and what does not render', () => {
    const opened = createEnvelope({
      channel_id: 'c1',
      sender_id: 'hub',
      event_type: EV_CHANNEL_OPENED,
      event_data: { channel_id: 'c1' },
    });
    const wal = [text('alice', 'private', ['bob']), opened, text('alice', 'broadcast'), text('bob', "bob's reply")];
    expect(fullTranscript().project(wal, as('carol'))).toEqual([
      { kind: 'request', text: 'broadcast' },
      { kind: 'request', text: "bob's reply" },
    ]);
    expect(fullTranscript().project(wal, as('alice'))).toEqual([
      { kind: 'message', text: 'private' },
      { kind: 'message', text: 'broadcast' },
      { kind: 'request', text: "bob's reply" },
    ]);
  });

  it('refuses a window of fewer than one message', () => {
    expect(() => windowedSummary(0)).toThrow(new RangeError('recent_n must be >= 1, got 0'));
    expect(() => namedWindowedSummary(-2)).toThrow(new RangeError('recent_n must be >= 1, got -2'));
  });
});

describe('name resolver (AG2 test_view_name_resolver)', () => {
  const conversation = (): ReturnType<typeof text>[] => [
    text('alice', 'hi bob'),
    text('bob', 'hi alice'),
    text('alice', "how's it going"),
  ];

  it('resolves an id to itself by default', () => {
    expect(defaultNameResolver('abc-123')).toBe('abc-123');
  });

  it('leaves full transcripts and windowed summaries unnamed even with a resolver', () => {
    const expected = [
      { kind: 'request', text: 'hi bob' },
      { kind: 'message', text: 'hi alice' },
      { kind: 'request', text: "how's it going" },
    ];
    expect(fullTranscript().project(conversation(), as('bob', { nameFor }))).toEqual(expected);
    expect(windowedSummary(10).project(conversation(), as('bob', { nameFor }))).toEqual(expected);
  });

  it('prefixes other speakers with their names in a named transcript', () => {
    expect(namedTranscript().project(conversation(), as('bob', { nameFor }))).toEqual([
      { kind: 'request', text: '[Alice]: hi bob' },
      { kind: 'message', text: 'hi alice' },
      { kind: 'request', text: "[Alice]: how's it going" },
    ]);
  });

  it('falls back to the id of a sender the resolver does not know', () => {
    expect(namedTranscript().project([text('ghost', 'leftover')], as('bob', { nameFor }))).toEqual([
      { kind: 'request', text: '[ghost]: leftover' },
    ]);
  });

  it('names speakers in a named windowed summary, short and long', () => {
    expect(namedWindowedSummary(10).project(conversation(), as('bob', { nameFor }))).toEqual([
      { kind: 'request', text: '[Alice]: hi bob' },
      { kind: 'message', text: 'hi alice' },
      { kind: 'request', text: "[Alice]: how's it going" },
    ]);
    expect(namedWindowedSummary(3).project(eight(), as('bob', { nameFor }))).toEqual([
      { kind: 'summary', summary: 'Earlier in this channel: 5 messages from Alice.', eventCount: 5 },
      { kind: 'request', text: '[Alice]: msg 5' },
      { kind: 'request', text: '[Alice]: msg 6' },
      { kind: 'request', text: '[Alice]: msg 7' },
    ]);
  });

  it('hands the resolver to a custom view', async () => {
    const speakers: ViewPolicy = {
      name: 'speakers',
      project: (wal, options) =>
        Promise.resolve(
          wal.map((e) => ({ kind: 'request', text: (options.nameFor ?? defaultNameResolver)(e.sender_id) })),
        ),
    };
    expect(await speakers.project(conversation(), as('carol', { nameFor }))).toEqual([
      { kind: 'request', text: 'Alice' },
      { kind: 'request', text: 'Bob' },
      { kind: 'request', text: 'Alice' },
    ]);
  });

  it('prefixes a single-envelope projection only in named views', () => {
    const one = [text('alice', 'hi')];
    const project = (view: ViewPolicy): unknown => view.project(one, as('bob', { nameFor }));
    expect(project(fullTranscript())).toEqual([{ kind: 'request', text: 'hi' }]);
    expect(project(windowedSummary(10))).toEqual([{ kind: 'request', text: 'hi' }]);
    expect(project(namedTranscript())).toEqual([{ kind: 'request', text: '[Alice]: hi' }]);
    expect(project(namedWindowedSummary(4))).toEqual([{ kind: 'request', text: '[Alice]: hi' }]);
  });
});

describe('default views of the adapters', () => {
  const adapters = createDefaultAdapterRegistry();
  const viewOf = (type: string): string => {
    const adapter = adapters.get(type, 1);
    return viewFromSpec(adapter.defaultViewPolicy(channelFor(adapter, 'alice', ['bob', 'carol']), 'alice')).name;
  };

  it('gives consulting a full transcript, conversation an unnamed windowed summary, discussion and workflow a named one', () => {
    expect(viewOf('consulting')).toBe('full_transcript');
    expect(viewOf('conversation')).toBe('windowed_summary');
    expect(viewOf('discussion')).toBe('named_windowed_summary');
    expect(viewOf('workflow')).toBe('named_windowed_summary');
  });
});

describe('toModelMessages', () => {
  it('maps requests to user, own messages to assistant and the summary to system', () => {
    expect(
      toModelMessages([
        { kind: 'summary', summary: 'Earlier in this channel: 1 message from alice.', eventCount: 1 },
        { kind: 'request', text: 'hi' },
        { kind: 'message', text: 'hello' },
      ]),
    ).toEqual([
      { role: 'system', content: 'Earlier in this channel: 1 message from alice.' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ]);
  });
});
