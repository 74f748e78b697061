import { z } from 'zod';
import { TimestampSchema } from './envelope.js';
import { IdSchema } from './ids.js';

/** Lifecycle of a channel: pending (handshake) → active → closing (draining) → closed, or expired by TTL. */
export const ChannelState = {
  Pending: 'pending',
  Active: 'active',
  Closing: 'closing',
  Closed: 'closed',
  Expired: 'expired',
} as const;
export type ChannelState = (typeof ChannelState)[keyof typeof ChannelState];
export const ChannelStateSchema = z.enum([
  ChannelState.Pending,
  ChannelState.Active,
  ChannelState.Closing,
  ChannelState.Closed,
  ChannelState.Expired,
]);

/** True for `closed` and `expired`: nothing is admitted any more. */
export function isTerminalChannelState(state: ChannelState): boolean {
  return state === ChannelState.Closed || state === ChannelState.Expired;
}

/** The creator is the initiator; in a 2-party channel the other is the respondent; else participants. */
export const ParticipantRole = {
  Initiator: 'initiator',
  Respondent: 'respondent',
  Participant: 'participant',
} as const;
export type ParticipantRole = (typeof ParticipantRole)[keyof typeof ParticipantRole];
export const ParticipantRoleSchema = z.enum([
  ParticipantRole.Initiator,
  ParticipantRole.Respondent,
  ParticipantRole.Participant,
]);

/** A member of a channel. `order` is the position in turn rotations (the creator is 0). */
export const ParticipantSchema = z.strictObject({
  agent_id: IdSchema,
  role: ParticipantRoleSchema,
  order: z.number().int().min(0),
  joined_at: z.union([z.literal(''), TimestampSchema]).default(''),
});
export type Participant = z.infer<typeof ParticipantSchema>;

/** How many participants a manifest takes, and their roles. AG2 calls this `ParticipantSchema`. */
export const ParticipantRulesSchema = z.strictObject({
  min: z.number().int().min(0),
  max: z.number().int().min(0).nullable().default(null),
  roles: z.array(z.string()).default([]),
});
export type ParticipantRules = z.infer<typeof ParticipantRulesSchema>;

/** A time or policy promise the hub checks for a channel (`acks_within`, `reply_within`, …). */
export const ExpectationSchema = z.strictObject({
  /** Evaluator name: `acks_within`, `reply_within`, `max_silence`, `turn_within`, or a custom one. */
  name: z.string().min(1),
  /** Handler name: a built-in `ViolationHandlerName` (`audit`, `auto_close`, …) or a custom one. */
  on_violation: z.string().min(1),
  /** Evaluator parameters, e.g. `{ "seconds": 30 }`. */
  params: z.record(z.string(), z.unknown()).default({}),
  applies_to: z.array(z.string()).nullable().default(null),
});
export type Expectation = z.infer<typeof ExpectationSchema>;

/** What a channel type is: its adapter key `(type, version)`, participant rules, knobs and expectations. */
export const ChannelManifestSchema = z.strictObject({
  type: z.string().min(1).max(64),
  version: z.number().int().min(1).default(1),
  participants: ParticipantRulesSchema.prefault({ min: 2 }),
  /** Documentation of the knobs the adapter reads: knob name → type name. */
  knobs_schema: z.record(z.string(), z.string()).default({}),
  default_view_policy: z.string().default('full_transcript'),
  expectations: z.array(ExpectationSchema).default([]),
});
export type ChannelManifest = z.infer<typeof ChannelManifestSchema>;
export type ChannelManifestInput = z.input<typeof ChannelManifestSchema>;

/**
 * Everything the hub knows about a channel: AG2's 15 keys, and `expired_at` once the channel's history expired (not
 * one of AG2's: absent until then, so that a record without it parses as it always did).
 */
export const ChannelMetadataSchema = z.strictObject({
  channel_id: IdSchema,
  manifest: ChannelManifestSchema,
  creator_id: IdSchema,
  participants: z.array(ParticipantSchema),
  state: ChannelStateSchema,
  created_at: TimestampSchema,
  expires_at: TimestampSchema.nullable().default(null),
  closed_at: TimestampSchema.nullable().default(null),
  close_reason: z.string().default(''),
  parent_channel_id: IdSchema.nullable().default(null),
  knobs: z.record(z.string(), z.unknown()).default({}),
  labels: z.record(z.string(), z.string()).default({}),
  required_acks: z.number().int().min(0).nullable().default(null),
  pending_acks: z.array(IdSchema).default([]),
  rejected_by: z.array(IdSchema).default([]),
  /**
   * When the channel's history expired: the hub's history retention (`hub-service --retain-closed`) removed its log
   * and snapshots, `closed_at` + the retention. Absent while the history is kept; from then on `readWal` and
   * `adapterState` answer `not_found` with `details.reason` `expired`.
   */
  expired_at: TimestampSchema.optional(),
});
export type ChannelMetadata = z.infer<typeof ChannelMetadataSchema>;
export type ChannelMetadataInput = z.input<typeof ChannelMetadataSchema>;

/** The participant ids of a channel, in participant order. */
export function participantIds(metadata: Pick<ChannelMetadata, 'participants'>): string[] {
  return [...metadata.participants].sort((a, b) => a.order - b.order).map((p) => p.agent_id);
}

/** True when `agentId` is a participant of the channel. */
export function isParticipant(metadata: Pick<ChannelMetadata, 'participants'>, agentId: string): boolean {
  return metadata.participants.some((p) => p.agent_id === agentId);
}
