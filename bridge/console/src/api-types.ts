import { z } from 'zod';

// The bridge's replies as the console reads them: loose objects (a field the bridge adds later is kept, not refused),
// with only the fields the views use. The bridge's own schemas (bridge/src/api-schemas.ts) are the contract; they
// import @ag2net/protocol, which needs Node, so the console keeps these small copies.

const Rec = z.record(z.string(), z.unknown());

export const ErrorBodySchema = z.looseObject({
  error: z.looseObject({ code: z.string(), message: z.string(), details: Rec.optional() }),
});

export const SessionSchema = z.looseObject({
  token: z.string(),
  expires_at: z.string(),
  name: z.string(),
  operator: z.boolean(),
});
export type Session = z.infer<typeof SessionSchema>;

export const MeSchema = z.looseObject({ name: z.string(), operator: z.boolean(), agent_id: z.string().nullable() });
export type Me = z.infer<typeof MeSchema>;

export const PassportSchema = z.looseObject({
  name: z.string(),
  owner: z.string().default(''),
  provider: z.string().nullable().default(null),
  model: z.string().nullable().default(null),
  region: z.string().nullable().default(null),
  kind: z.string().nullable().default(null),
  hub_id: z.string().nullable().default(null),
  version: z.number().default(1),
  agent_id: z.string().nullable().default(null),
  created_at: z.string().default(''),
  cost: Rec.nullable().default(null),
});
export type Passport = z.infer<typeof PassportSchema>;
export const AgentsPageSchema = z.looseObject({ agents: z.array(PassportSchema), next_cursor: z.string().nullable() });
export const PassportReplySchema = z.looseObject({ passport: PassportSchema });

export const ObservedStatSchema = z.looseObject({
  n: z.number().default(0),
  completed: z.number().default(0),
  failed: z.number().default(0),
  expired: z.number().default(0),
  p50_latency_ms: z.number().nullable().default(null),
});
export const ResumeSchema = z.looseObject({
  claimed_capabilities: z.array(z.string()).default([]),
  domains: z.array(z.string()).default([]),
  summary: z.string().default(''),
  examples: z
    .array(
      z.looseObject({
        title: z.string(),
        outcome: z.string().default(''),
        when: z.string().nullable().default(null),
        note: z.string().default(''),
      }),
    )
    .default([]),
  observed: z.record(z.string(), ObservedStatSchema).default({}),
  last_updated: z.string().default(''),
});
export type Resume = z.infer<typeof ResumeSchema>;
export const ResumeReplySchema = z.looseObject({ resume: ResumeSchema });
export const SkillReplySchema = z.looseObject({ skill_md: z.string().nullable() });

export const ParticipantSchema = z.looseObject({ agent_id: z.string(), role: z.string(), order: z.number() });
export const ChannelSchema = z.looseObject({
  channel_id: z.string(),
  manifest: z.looseObject({ type: z.string() }),
  creator_id: z.string(),
  participants: z.array(ParticipantSchema),
  state: z.string(),
  created_at: z.string(),
  expires_at: z.string().nullable().default(null),
  closed_at: z.string().nullable().default(null),
  close_reason: z.string().default(''),
  knobs: Rec.default({}),
  labels: z.record(z.string(), z.string()).default({}),
  pending_acks: z.array(z.string()).default([]),
  /** When the channel's history expired (the hub's retention removed its log); absent while it is kept. */
  expired_at: z.string().optional(),
});
export type Channel = z.infer<typeof ChannelSchema>;
export const MessagePreviewSchema = z.looseObject({
  sequence: z.number(),
  sender_id: z.string(),
  event_type: z.string(),
  text: z.string(),
  created_at: z.string(),
});
export const ChannelPreviewSchema = z.looseObject({
  last_sequence: z.number(),
  last_activity_at: z.string().nullable(),
  last_message: MessagePreviewSchema.nullable(),
});
export type ChannelPreview = z.infer<typeof ChannelPreviewSchema>;
export const ChannelsPageSchema = z.looseObject({
  channels: z.array(ChannelSchema),
  next_cursor: z.string().nullable(),
  previews: z.record(z.string(), ChannelPreviewSchema).default({}),
});

export const AgentActivitySchema = z.looseObject({
  agent_id: z.string(),
  last_seen_at: z.string(),
  channel_id: z.string(),
  online: z.boolean(),
});
export type AgentActivity = z.infer<typeof AgentActivitySchema>;
export const ActivityReplySchema = z.looseObject({
  as_of: z.string(),
  online_window_seconds: z.number(),
  channels_read: z.number(),
  agents: z.array(AgentActivitySchema),
});
export const ChannelReplySchema = z.looseObject({ channel: ChannelSchema });
export const AdapterStateReplySchema = z.looseObject({ state: Rec.nullable() });

export const EnvelopeSchema = z.looseObject({
  channel_id: z.string(),
  sender_id: z.string(),
  audience: z.array(z.string()).nullable().default(null),
  event_type: z.string(),
  event_data: Rec.default({}),
  envelope_id: z.string().default(''),
  causation_id: z.string().nullable().default(null),
  created_at: z.string().default(''),
  sequence: z.number().optional(),
});
export type Envelope = z.infer<typeof EnvelopeSchema>;
export const PostReplySchema = z.looseObject({ envelope_id: z.string(), sequence: z.number() });

export const TaskSchema = z.looseObject({
  task_id: z.string(),
  owner_id: z.string(),
  spec: z.looseObject({ title: z.string().default(''), objective: z.string().default('') }).default({
    title: '',
    objective: '',
  }),
  state: z.string(),
  created_at: z.string(),
  completed_at: z.string().nullable().default(null),
  channel_id: z.string().nullable().default(null),
  error: z.string().nullable().default(null),
});
export type Task = z.infer<typeof TaskSchema>;
export const TasksPageSchema = z.looseObject({ tasks: z.array(TaskSchema), next_cursor: z.string().nullable() });

export const AuditRecordSchema = z.looseObject({ id: z.string(), kind: z.string(), at: z.string() });
export type AuditRecord = z.infer<typeof AuditRecordSchema>;
export const AuditPageSchema = z.looseObject({
  records: z.array(AuditRecordSchema),
  next_cursor: z.string().nullable().default(null),
});

export const HealthSchema = z.looseObject({
  hub_id: z.string(),
  role: z.string(),
  epoch: z.number(),
  active_channels: z.number(),
  registered_agents: z.number(),
  adapters_loaded: z.number(),
  uptime_seconds: z.number(),
  quarantined: z.number().default(0),
  dead_letters: z.number().default(0),
});
export type Health = z.infer<typeof HealthSchema>;
const LeaseSchema = z.looseObject({ holder: z.string(), epoch: z.number() });
export const HubHealthSchema = z.looseObject({ health: HealthSchema, lease: LeaseSchema.nullable() });
export const HubStatusSchema = z.looseObject({
  lease: LeaseSchema.nullable(),
  hubs: z.array(HealthSchema),
  delivery: z
    .looseObject({
      pending: z.number(),
      ack_pending: z.number(),
      oldest_pending_age_seconds: z.number().nullable(),
    })
    .nullable(),
});
export type HubStatus = z.infer<typeof HubStatusSchema>;
