import { createDefaultAdapterRegistry, sequence, type ChannelAdapter } from '@ag2net/adapters';
import { Access } from '@ag2net/protocol/internal';
import {
  ChannelMetadataSchema,
  ChannelState,
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_OPENED,
  EV_CONTEXT_SET,
  EV_PACKET,
  EV_TEXT,
  EnvelopeSchema,
  HUB_OPS,
  HUB_OP_NAMES,
  NetworkError,
  OPERATOR_CALLER,
  ParticipantRole,
  type ChannelMetadata,
  type Envelope,
  type EnvelopeInput,
  type HubOp,
} from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { authorize, callerOf, mayRead, type AccessChannel, type AccessDirectory } from './access.js';

const CHANNEL = '01JCHANNEL0000000000000000';
const T0 = '2026-01-01T00:00:00.000Z';
const adapters = createDefaultAdapterRegistry();

/** A channel of `type` created by the first of `ids` with the rest invited, as the hub builds it, in `state`. */
function channelOf(
  type: string,
  ids: readonly string[],
  options: { readonly state?: ChannelState; readonly knobs?: Record<string, unknown>; readonly id?: string } = {},
): AccessChannel & { readonly adapter: ChannelAdapter } {
  const adapter = adapters.get(type, 1);
  const metadata: ChannelMetadata = ChannelMetadataSchema.parse({
    channel_id: options.id ?? CHANNEL,
    manifest: adapter.manifest,
    creator_id: ids[0],
    participants: ids.map((agent_id, order) => ({
      agent_id,
      role:
        order === 0
          ? ParticipantRole.Initiator
          : ids.length === 2
            ? ParticipantRole.Respondent
            : ParticipantRole.Participant,
      order,
      joined_at: T0,
    })),
    state: options.state ?? ChannelState.Active,
    created_at: T0,
    knobs: options.knobs ?? {},
  });
  return { metadata, adapter, state: adapter.initialState(metadata) };
}

/** `channel` after its adapter folded `envelopes`. */
function after(channel: AccessChannel & { readonly adapter: ChannelAdapter }, ...envelopes: Envelope[]): AccessChannel {
  let state = channel.state ?? {};
  for (const envelope of envelopes) state = channel.adapter.fold(envelope, state);
  return { ...channel, state };
}

function envelope(sender: string, fields: Partial<EnvelopeInput> = {}): Envelope {
  return EnvelopeSchema.parse({
    channel_id: CHANNEL,
    sender_id: sender,
    event_type: EV_TEXT,
    event_data: { text: 'hi' },
    ...fields,
  });
}

/** A workflow's knobs: alice speaks first, then bob. */
function workflowKnobs(): Record<string, unknown> {
  return { graph: sequence(['alice', 'bob']).toDict() };
}

/** alice, bob, carol and dave are registered, mallory is not; `channels` are all the channels there are. */
function directoryWith(channels: readonly AccessChannel[]): AccessDirectory {
  return {
    isRegistered: (id) => ['alice', 'bob', 'carol', 'dave'].includes(id),
    channel: (id) => channels.find((c) => c.metadata.channel_id === id),
    task: () => undefined,
  };
}
/** CHANNEL is alice's conversation with bob; carol is outside it. */
const directory = directoryWith([channelOf('conversation', ['alice', 'bob'])]);

/** The wire code and message of a refusal, or `'allowed'` with the caller handed on. */
function outcome(op: HubOp, caller: string, request: unknown = { channel_id: CHANNEL }, dir = directory): string {
  try {
    return `allowed as ${JSON.stringify(authorize({ op, caller, request }, dir))}`;
  } catch (err) {
    if (err instanceof NetworkError) return `${err.code}: ${err.message}`;
    throw err;
  }
}

/** What carol, outside every channel, is answered when she posts `sent` to `channel`. */
function carolPosts(channel: AccessChannel, sent: Partial<EnvelopeInput> = {}): string {
  const id = channel.metadata.channel_id;
  return outcome('post', 'carol', envelope('carol', { channel_id: id, ...sent }), directoryWith([channel]));
}

const ofClass = (access: Access) => HUB_OP_NAMES.filter((op) => HUB_OPS[op].access === access);

describe('authorize', () => {
  it('lets anyone call a public op, with no caller', () => {
    expect(ofClass(Access.Public).length).toBeGreaterThan(0);
    for (const op of ofClass(Access.Public)) expect(outcome(op, '')).toBe('allowed as ""');
  });

  it('lets a registered identity call a self op as itself, and refuses an unregistered one', () => {
    for (const op of ofClass(Access.Self)) {
      expect(outcome(op, 'carol')).toBe('allowed as "carol"');
      expect(outcome(op, 'mallory')).toBe("access_denied: unknown caller 'mallory'");
    }
  });

  it('lets a participant call a participant op on its channel; refuses everyone else; unknown channel is not_found', () => {
    for (const op of ofClass(Access.Participant)) {
      expect(outcome(op, 'bob')).toBe('allowed as "bob"');
      expect(outcome(op, 'mallory')).toBe("access_denied: unknown caller 'mallory'");
      expect(outcome(op, 'bob', { channel_id: 'nope' })).toBe('not_found: channel not found: nope');
    }
  });

  it('answers a non-member’s read of a channel as an unknown channel, its post as AG2 does, and refuses its acts', () => {
    const requests: Partial<Record<HubOp, unknown>> = { post: envelope('carol') };
    const outsider = ofClass(Access.Participant).map((op) => [op, outcome(op, 'carol', requests[op])]);
    const hidden = `not_found: channel not found: ${CHANNEL}`;
    const refused = `access_denied: 'carol' is not a participant of channel '${CHANNEL}'`;
    expect(Object.fromEntries(outsider)).toEqual({
      getChannel: hidden,
      readWal: hidden,
      findEnvelopeByCausation: hidden,
      canSend: hidden,
      adapterState: hidden,
      closeChannel: refused,
      post: `protocol_error: conversation channel '${CHANNEL}' only accepts sends from participants, got 'carol'`,
      reportTurnFailure: refused,
      acquireTurnLock: refused,
      renewTurnLock: refused,
      releaseTurnLock: refused,
    });
    // But for the id the caller sent, the very answer a channel that does not exist gets.
    const unknown = outcome('readWal', 'carol', { channel_id: 'nope' });
    expect(outcome('readWal', 'carol').replace(CHANNEL, '<id>')).toBe(unknown.replace('nope', '<id>'));
  });

  it('lets only the operator call an operator op', () => {
    expect(ofClass(Access.Operator)).toEqual(['revokeIdentity', 'readmitIdentity', 'deliveryLag', 'readAudit']);
    expect(outcome('readAudit', OPERATOR_CALLER)).toBe(`allowed as "${OPERATOR_CALLER}"`);
    for (const caller of ['alice', 'mallory'])
      expect(outcome('readAudit', caller)).toBe('access_denied: operator only');
  });

  it('lets the operator call exactly the ops whose operatorReads is true, on any channel that exists', () => {
    const reads = HUB_OP_NAMES.filter((op) => HUB_OPS[op].operatorReads);
    expect(reads.sort()).toEqual(
      [
        'adapterState',
        'deliveryLag',
        'findEnvelopeByCausation',
        'getChannel',
        'getTask',
        'listChannels',
        'listTasks',
        'readAudit',
        'readWal',
        'readmitIdentity',
        'revokeIdentity',
      ].sort(),
    );
    for (const op of HUB_OP_NAMES) {
      if (HUB_OPS[op].access === Access.Public) continue;
      const expected = HUB_OPS[op].operatorReads
        ? `allowed as "${OPERATOR_CALLER}"`
        : `access_denied: ${op} is not an operator operation`;
      expect(outcome(op, OPERATOR_CALLER)).toBe(expected);
    }
    expect(outcome('readWal', OPERATOR_CALLER, { channel_id: 'nope' })).toBe('not_found: channel not found: nope');
  });
});

describe('authorize: a post from outside the channel', () => {
  const cid = `'${CHANNEL}'`;

  it('gets the adapter’s AG2 message for a turn, whichever the channel type and state of its turns', () => {
    const consulting = channelOf('consulting', ['alice', 'bob']);
    const asked = after(consulting, envelope('alice', { envelope_id: 'q1' }));
    const discussion = channelOf('discussion', ['alice', 'bob', 'dave']);
    const workflow = channelOf('workflow', ['alice', 'bob'], { knobs: { graph: sequence(['bob', 'alice']).toDict() } });
    expect({
      conversation: carolPosts(channelOf('conversation', ['alice', 'bob'])),
      consultingFirst: carolPosts(consulting),
      consultingReply: carolPosts(asked),
      discussion: carolPosts(discussion),
      discussionLater: carolPosts(after(discussion, envelope('alice', { envelope_id: 'd1' }))),
      workflowText: carolPosts(workflow),
      workflowPacket: carolPosts(workflow, { event_type: EV_PACKET, event_data: { body: 'x' } }),
      workflowContext: carolPosts(workflow, { event_type: EV_CONTEXT_SET, event_data: { set: { a: 1 } } }),
    }).toEqual({
      conversation: `protocol_error: conversation channel ${cid} only accepts sends from participants, got 'carol'`,
      consultingFirst: `protocol_error: consulting channel ${cid} expects first send from initiator 'alice', got 'carol'`,
      consultingReply: `protocol_error: consulting channel ${cid} expects reply from respondent 'bob', got 'carol'`,
      discussion: `protocol_error: discussion channel ${cid} expects 'alice' to speak, got 'carol'`,
      discussionLater: `protocol_error: discussion channel ${cid} expects 'bob' to speak, got 'carol'`,
      workflowText: `protocol_error: workflow ${cid} expects 'bob' to speak, got 'carol'`,
      workflowPacket: `protocol_error: workflow ${cid} expects 'bob' to speak, got 'carol'`,
      workflowContext: `protocol_error: workflow ${cid} only accepts EV_CONTEXT_SET from participants, got 'carol'`,
    });
  });

  it('gets AG2 1.2.1’s refusal of a non-participant for an event the adapter does not judge, and for an invite answer', () => {
    const refusal = `protocol_error: channel ${cid} only accepts sends from participants, got 'carol'`;
    const conversation = channelOf('conversation', ['alice', 'bob']);
    const pending = channelOf('consulting', ['alice', 'bob'], { state: ChannelState.Pending });
    expect([
      carolPosts(conversation, { event_type: 'acme.note', event_data: { note: 'hi' } }),
      carolPosts(channelOf('consulting', ['alice', 'bob']), { event_type: 'acme.note' }),
      carolPosts(pending, { event_type: EV_CHANNEL_INVITE_ACK, event_data: { channel_id: CHANNEL } }),
      carolPosts({ ...conversation, adapter: null, state: null }),
    ]).toEqual([refusal, refusal, refusal, refusal]);
  });

  it('gets the channel’s state first: closed, expired, not active; and the hub’s own events are the hub’s', () => {
    expect([
      carolPosts(channelOf('discussion', ['alice', 'bob', 'dave'], { state: ChannelState.Closed })),
      carolPosts({ ...channelOf('conversation', ['alice', 'bob'], { state: ChannelState.Expired }), state: null }),
      carolPosts(channelOf('conversation', ['alice', 'bob'], { state: ChannelState.Pending })),
      carolPosts(channelOf('workflow', ['alice', 'bob'], { state: ChannelState.Closing, knobs: workflowKnobs() })),
      carolPosts(channelOf('conversation', ['alice', 'bob']), { event_type: EV_CHANNEL_OPENED }),
    ]).toEqual([
      `protocol_error: channel ${cid} is closed`,
      `protocol_error: channel ${cid} is expired`,
      `protocol_error: channel ${cid} not active (state=pending)`,
      `protocol_error: channel ${cid} not active (state=closing)`,
      `protocol_error: ${EV_CHANNEL_OPENED} events are written by the hub`,
    ]);
  });

  it('refuses a body in someone else’s name for the mismatch, before anything about the channel', () => {
    const closed = channelOf('conversation', ['alice', 'bob'], { state: ChannelState.Closed });
    expect(outcome('post', 'carol', envelope('bob'), directoryWith([closed]))).toBe(
      "auth_failed: sender_id 'bob' does not match the caller 'carol'",
    );
  });

  it('quotes only the channel id the caller sent and the caller, however the id is written', () => {
    const odd = 'c-1_x';
    expect(carolPosts(channelOf('conversation', ['alice', 'bob'], { id: odd }))).toBe(
      `protocol_error: conversation channel '${odd}' only accepts sends from participants, got 'carol'`,
    );
  });
});

describe('callerOf', () => {
  it('takes the last subject token as an identity id or the operator caller, and nothing else', () => {
    expect(callerOf('p.hub.v1.post.alice')).toBe('alice');
    expect(callerOf(`p.hub.v1.readAudit.${OPERATOR_CALLER}`)).toBe(OPERATOR_CALLER);
    expect(() => callerOf('p.hub.v1.post.$admin')).toThrow("caller in subject is invalid: '$admin'");
  });
});

describe('mayRead', () => {
  it('shows the operator every envelope and anyone else only those addressed to it', () => {
    const secret = { sender_id: 'alice', audience: ['bob'] };
    expect([OPERATOR_CALLER, 'alice', 'bob', 'carol'].map((c) => mayRead(c, secret))).toEqual([
      true,
      true,
      true,
      false,
    ]);
  });
});
