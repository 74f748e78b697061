import {
  ChannelMetadataSchema,
  ChannelStateSchema,
  DeliveryLagSchema,
  EnvelopeSchema,
  HUB_OPS,
  HealthSchema,
  IdSchema,
  PassportKindSchema,
  PassportSchema,
  ResumeSchema,
  TaskMetadataSchema,
  TaskStateSchema,
  TimestampSchema,
} from '@ag2net/protocol';
import { z } from 'zod';

// The bridge's HTTP API: what its routes accept and answer. The web console (bridge/console) parses the bridge's
// replies with these same schemas, so this module stays browser-safe: zod and @ag2net/protocol only.

/** A whole number in a query string. */
const QueryInt = (min: number, max: number) =>
  z.string().regex(/^\d+$/, 'expected a whole number').transform(Number).pipe(z.number().int().min(min).max(max));
const Limit = QueryInt(1, 500).optional();
const Cursor = z.string().max(64).optional();
const NextCursor = z.string().nullable();

export const ErrorBodySchema = z.strictObject({
  error: z.strictObject({
    code: z.string(),
    message: z.string(),
    /**
     * The hub's machine-readable details, as it sent them: `reason` where a client acts on it (`expired`: the
     * channel's history expired, with `channel_id` and `expired_at`), limits and sizes.
     */
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});

export const SignInSchema = z.strictObject({
  /** A person's name, or `$operator` with the operator key. */
  name: z.string().min(1).max(128),
  api_key: z.string().min(1).max(1024),
});
export const SessionSchema = z.strictObject({
  token: z.string(),
  expires_at: TimestampSchema,
  name: z.string(),
  operator: z.boolean(),
});
export type Session = z.infer<typeof SessionSchema>;
export const MeSchema = z.strictObject({
  name: z.string(),
  operator: z.boolean(),
  /** The person's agent id; `null` for the operator and anonymous readers. */
  agent_id: IdSchema.nullable(),
});

export const AgentsQuerySchema = z.strictObject({
  capability: z.string().max(256).optional(),
  query: z.string().max(256).optional(),
  kind: PassportKindSchema.optional(),
  limit: Limit,
  cursor: Cursor,
});
export const AgentsPageSchema = z.strictObject({ agents: z.array(PassportSchema), next_cursor: NextCursor });
export const PassportReplySchema = z.strictObject({ passport: PassportSchema });
export const ResumeReplySchema = z.strictObject({ resume: ResumeSchema });
export const SkillReplySchema = z.strictObject({ skill_md: z.string().nullable() });

export const ChannelsQuerySchema = z.strictObject({
  /** Only channels this agent takes part in too. */
  agent_id: IdSchema.optional(),
  state: ChannelStateSchema.optional(),
  /** Only channels of this type (`consulting`, `workflow`, …), filtered on the bridge over the hub's page. */
  type: z.string().min(1).max(64).optional(),
  /** `true`: the page carries `previews` (each channel's last message), read from the end of each log. */
  preview: z.enum(['true', 'false']).optional(),
  limit: Limit,
  cursor: Cursor,
});

/** A channel's last message the caller may see, its text cut to 280 characters. */
export const MessagePreviewSchema = z.strictObject({
  sequence: z.number().int().min(0),
  sender_id: IdSchema,
  /** `ag2.msg.text` or `ag2.packet`. */
  event_type: z.string(),
  /** The text's `text` or the packet's `body`. */
  text: z.string(),
  created_at: z.union([z.literal(''), TimestampSchema]),
});

/**
 * What a channel list shows under a channel: `last_sequence` (the log's end), `last_activity_at` (when the newest
 * envelope the caller may see of the last 20 was admitted; `null` when none) and `last_message` (the newest text or
 * packet among them the caller may see; `null` when none).
 */
export const ChannelPreviewSchema = z.strictObject({
  last_sequence: z.number().int().min(0),
  last_activity_at: TimestampSchema.nullable(),
  last_message: MessagePreviewSchema.nullable(),
});
export type ChannelPreview = z.infer<typeof ChannelPreviewSchema>;

export const ChannelsPageSchema = z.strictObject({
  channels: z.array(ChannelMetadataSchema),
  next_cursor: NextCursor,
  /** With `preview=true`: previews by channel id, of the page's 100 most recently created channels. */
  previews: z.record(IdSchema, ChannelPreviewSchema).optional(),
});

/**
 * When agents were last seen by the caller: each agent's newest envelope in the tails (last 20 envelopes) of the
 * caller's 50 most recent channels, live ones first. `online`: that envelope is at most `online_window_seconds`
 * older than `as_of`, the bridge's clock when it answered.
 */
export const ActivityReplySchema = z.strictObject({
  as_of: TimestampSchema,
  online_window_seconds: z.number().int().positive(),
  /** How many channels were read. */
  channels_read: z.number().int().min(0),
  /** Newest first; agents seen in none of the channels read are not listed. */
  agents: z.array(
    z.strictObject({
      agent_id: IdSchema,
      last_seen_at: TimestampSchema,
      /** The channel of that envelope. */
      channel_id: IdSchema,
      online: z.boolean(),
    }),
  ),
});
/** One agent's line of `ActivityReplySchema`. */
export type AgentActivity = z.infer<typeof ActivityReplySchema>['agents'][number];
export const ChannelReplySchema = z.strictObject({ channel: ChannelMetadataSchema });
export const OpenChannelSchema = z.strictObject({
  type: z.string().min(1).max(64),
  /** Names or ids of the invitees. */
  target: z.union([z.string().min(1).max(128), z.array(z.string().min(1).max(128)).min(1).max(64)]),
  knobs: z.record(z.string(), z.unknown()).optional(),
  ttl: z.union([z.string().max(32), z.number().positive()]).optional(),
  intent: z.string().max(1024).optional(),
  labels: z.record(z.string(), z.string().max(256)).optional(),
});
export const CloseChannelSchema = z.strictObject({ reason: z.string().max(256).optional() });
export const AdapterStateReplySchema = z.strictObject({ state: z.record(z.string(), z.unknown()).nullable() });

export const LogQuerySchema = z.strictObject({
  since: QueryInt(1, Number.MAX_SAFE_INTEGER).optional(),
  until: QueryInt(1, Number.MAX_SAFE_INTEGER).optional(),
  limit: QueryInt(1, 1000).optional(),
});
export const LogPageSchema = z.strictObject({
  envelopes: z.array(EnvelopeSchema),
  last_sequence: z.number().int().min(0),
  next_since: z.number().int().min(1).nullable(),
});

/** A post as the signed-in person: `text` makes an `ag2.msg.text`; otherwise `event_type` and `event_data`. */
export const PostSchema = z.strictObject({
  /** Client-chosen envelope id, so that a retried post is admitted once; default a fresh one. */
  envelope_id: IdSchema.optional(),
  event_type: z.string().min(1).max(128).optional(),
  text: z
    .string()
    .max(64 * 1024)
    .optional(),
  event_data: z.record(z.string(), z.unknown()).optional(),
  audience: z.array(IdSchema).max(256).nullable().optional(),
  causation_id: IdSchema.nullable().optional(),
});
export const PostReplySchema = z.strictObject({
  envelope_id: IdSchema,
  sequence: z.number().int().positive(),
  created_at: TimestampSchema,
});

export const TasksQuerySchema = z.strictObject({
  agent_id: IdSchema.optional(),
  channel_id: IdSchema.optional(),
  state: TaskStateSchema.optional(),
  limit: Limit,
  cursor: Cursor,
});
export const TasksPageSchema = z.strictObject({ tasks: z.array(TaskMetadataSchema), next_cursor: NextCursor });
export const TaskReplySchema = z.strictObject({ task: TaskMetadataSchema });

export const AuditQuerySchema = z.strictObject({
  /** Comma-separated audit kinds (any of). */
  kinds: z.string().max(2048).optional(),
  channel_id: IdSchema.optional(),
  agent_id: IdSchema.optional(),
  since: TimestampSchema.optional(),
  until: TimestampSchema.optional(),
  limit: QueryInt(1, 1000).optional(),
  cursor: Cursor,
});
export const AuditPageSchema = HUB_OPS.readAudit.response;
export type AuditRecord = z.infer<typeof AuditPageSchema>['records'][number];

export const HubHealthSchema = z.strictObject({
  /** The answering hub's health: with several partitions, `partitions` and `held` say which of them it serves. */
  health: HealthSchema,
  /**
   * Partition 0's lease as the answering hub holds it, `{ holder, epoch }`; `null` when it does not hold partition 0.
   * With one partition that is the deployment's only lease. Kept for clients from before partitions: `health.held`
   * lists every partition the answering hub holds, and `GET /v1/hub/status` every partition's holder.
   */
  lease: z.strictObject({ holder: z.string(), epoch: z.number().int().min(0) }).nullable(),
});
export type HubHealth = z.infer<typeof HubHealthSchema>;

/**
 * One partition and the hubs that answered the roster holding it, each with its lease epoch: one hub normally; none
 * when no live hub holds it (its channels are not served until one takes it over); two for a moment while it moves
 * from one hub to another.
 */
export const PartitionHoldersSchema = z.strictObject({
  partition: z.number().int().min(0),
  held_by: z.array(z.strictObject({ hub_id: z.string(), epoch: z.number().int().min(0) })),
});
export type PartitionHolders = z.infer<typeof PartitionHoldersSchema>;

/**
 * Every hub, who holds each partition, and the delivery lag (operator). `partitions`, the deployment's partition
 * count as the hubs report it (when none answers, the count the bridge last learnt; `null` when it never learnt one);
 * `hubs`, every hub that answered the roster, those serving at least one partition (`active`) first, then the
 * standbys, each group by id, each with the partitions it holds (`held`); `holders`, every partition from 0 with the
 * hubs holding it; `unheld`, the partitions no hub holds (empty while the deployment serves every channel);
 * `delivery`, the hubs' delivery consumers summed over the partitions a hub holds (`null` while no hub holds one, or
 * before any hub provisioned the prefix).
 */
export const HubStatusSchema = z.strictObject({
  partitions: z.number().int().min(1).nullable(),
  hubs: z.array(HealthSchema),
  holders: z.array(PartitionHoldersSchema),
  unheld: z.array(z.number().int().min(0)),
  delivery: DeliveryLagSchema.nullable(),
});
export type HubStatus = z.infer<typeof HubStatusSchema>;

export const StreamQuerySchema = z.strictObject({
  /** Channel stream: the first sequence to send (default: after `Last-Event-ID`, else 1, the whole log). */
  since: QueryInt(1, Number.MAX_SAFE_INTEGER).optional(),
  /** Deliveries stream: start from the beginning of every channel (default: from now). */
  from: z.enum(['start', 'now']).optional(),
  /** A stream id to resume from when `Last-Event-ID` cannot be sent (EventSource sends it itself). */
  last_event_id: z
    .string()
    .max(16 * 1024)
    .optional(),
  /** The bearer token, for clients that cannot set headers (a browser's EventSource). */
  access_token: z.string().max(4096).optional(),
});
