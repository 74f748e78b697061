import { describe, expect, it } from 'vitest';
import {
  ChannelManifestSchema,
  ChannelMetadataSchema,
  ChannelState,
  ExpectationSchema,
  ParticipantRole,
  ParticipantSchema,
  isParticipant,
  isTerminalChannelState,
  participantIds,
} from '@ag2net/protocol';

/** The keys of AG2's `ChannelMetadata.to_dict()`, in its order. */
const AG2_METADATA_KEYS = [
  'channel_id',
  'manifest',
  'creator_id',
  'participants',
  'state',
  'created_at',
  'expires_at',
  'closed_at',
  'close_reason',
  'parent_channel_id',
  'knobs',
  'labels',
  'required_acks',
  'pending_acks',
  'rejected_by',
];

describe('ChannelState', () => {
  it('has the five AG2 states', () => {
    expect(ChannelState).toEqual({
      Pending: 'pending',
      Active: 'active',
      Closing: 'closing',
      Closed: 'closed',
      Expired: 'expired',
    });
  });

  it('counts closed and expired as terminal, and nothing else', () => {
    expect(Object.values(ChannelState).filter(isTerminalChannelState)).toEqual(['closed', 'expired']);
  });
});

describe('ParticipantRole', () => {
  it('has initiator, respondent and participant', () => {
    expect(Object.values(ParticipantRole)).toEqual(['initiator', 'respondent', 'participant']);
  });
});

describe('ChannelManifest', () => {
  it("fills AG2's defaults: version 1, at least 2 participants, full transcript, no expectations", () => {
    expect(ChannelManifestSchema.parse({ type: 'consulting' })).toStrictEqual({
      type: 'consulting',
      version: 1,
      participants: { min: 2, max: null, roles: [] },
      knobs_schema: {},
      default_view_policy: 'full_transcript',
      expectations: [],
    });
  });

  it('fills participant-rule defaults when only min is given', () => {
    expect(ChannelManifestSchema.parse({ type: 'discussion', participants: { min: 3 } }).participants).toStrictEqual({
      min: 3,
      max: null,
      roles: [],
    });
  });

  it('rejects a missing type, version 0 and unknown keys', () => {
    expect(ChannelManifestSchema.safeParse({}).success).toBe(false);
    expect(ChannelManifestSchema.safeParse({ type: 'x', version: 0 }).success).toBe(false);
    expect(ChannelManifestSchema.safeParse({ type: 'x', adapter: 'y' }).success).toBe(false);
  });
});

describe('Expectation', () => {
  it('defaults params to {} and applies_to to null', () => {
    expect(ExpectationSchema.parse({ name: 'reply_within', on_violation: 'notify_channel' })).toStrictEqual({
      name: 'reply_within',
      on_violation: 'notify_channel',
      params: {},
      applies_to: null,
    });
  });
});

describe('Participant', () => {
  it("defaults joined_at to ''", () => {
    expect(ParticipantSchema.parse({ agent_id: 'bob', role: 'respondent', order: 1 })).toStrictEqual({
      agent_id: 'bob',
      role: 'respondent',
      order: 1,
      joined_at: '',
    });
  });
});

describe('ChannelMetadata', () => {
  const minimal = {
    channel_id: 'c1',
    manifest: { type: 'consulting' },
    creator_id: 'alice',
    participants: [
      { agent_id: 'bob', role: 'respondent', order: 1 },
      { agent_id: 'alice', role: 'initiator', order: 0 },
    ],
    state: 'pending',
    created_at: '2026-05-09T12:00:00.123456+00:00',
  };

  it("emits exactly AG2's 15 keys, in order, after parse", () => {
    expect(Object.keys(ChannelMetadataSchema.parse(minimal))).toEqual(AG2_METADATA_KEYS);
  });

  it('keeps expired_at of a channel whose history expired; a record without it parses without it', () => {
    const expiredAt = '2026-05-10T12:00:00.000Z';
    expect(ChannelMetadataSchema.parse({ ...minimal, state: 'closed', expired_at: expiredAt })).toMatchObject({
      state: 'closed',
      expired_at: expiredAt,
    });
    expect(ChannelMetadataSchema.parse(minimal)).not.toHaveProperty('expired_at');
    expect(ChannelMetadataSchema.safeParse({ ...minimal, expired_at: null }).success).toBe(false);
    expect(ChannelMetadataSchema.safeParse({ ...minimal, expired_at: 'tomorrow' }).success).toBe(false);
  });

  it("fills AG2's defaults", () => {
    const metadata = ChannelMetadataSchema.parse(minimal);
    expect(metadata).toMatchObject({
      expires_at: null,
      closed_at: null,
      close_reason: '',
      parent_channel_id: null,
      knobs: {},
      labels: {},
      required_acks: null,
      pending_acks: [],
      rejected_by: [],
    });
    expect(metadata.manifest.participants).toStrictEqual({ min: 2, max: null, roles: [] });
  });

  it('rejects the seed-document state invited and unknown keys', () => {
    expect(ChannelMetadataSchema.safeParse({ ...minimal, state: 'invited' }).success).toBe(false);
    expect(ChannelMetadataSchema.safeParse({ ...minimal, sequence: 1 }).success).toBe(false);
  });

  it('lists participant ids in turn order and answers membership', () => {
    const metadata = ChannelMetadataSchema.parse(minimal);
    expect(participantIds(metadata)).toEqual(['alice', 'bob']);
    expect(isParticipant(metadata, 'bob')).toBe(true);
    expect(isParticipant(metadata, 'carol')).toBe(false);
  });
});
