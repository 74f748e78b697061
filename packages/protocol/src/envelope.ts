import { z } from 'zod';
import { IdSchema } from './ids.js';

/** How urgent an envelope is. Carried for clients; the hub does not reorder by it. */
export const Priority = {
  Background: 'background',
  Normal: 'normal',
  Urgent: 'urgent',
} as const;
export type Priority = (typeof Priority)[keyof typeof Priority];
export const PrioritySchema = z.enum([Priority.Background, Priority.Normal, Priority.Urgent]);

/** An ISO-8601 timestamp with an offset (`2026-01-01T00:00:00.000Z`, `2026-01-01T00:00:00+00:00`). */
export const TimestampSchema = z.iso.datetime({ offset: true });

/** A timestamp, or `""` where the hub has not stamped one yet. */
const StampSchema = z.union([z.literal(''), TimestampSchema]);

/** An event type: AG2's `ag2.*` types or any custom dotted name. */
export const EventTypeSchema = z
  .string()
  .min(1, 'event_type must not be empty')
  .max(256, 'event_type must be at most 256 characters');

/**
 * The unit of everything said in a channel, field for field AG2's `Envelope` with its JSON names, plus
 * `sequence`: the 1-based position in the channel's log, stamped by the hub.
 *
 * `envelope_id`, `created_at` and `sequence` are stamped by the hub at admission; a sender may propose an
 * `envelope_id` (a ULID it minted) so that a retried post is recognised and admitted once.
 */
export const EnvelopeSchema = z.strictObject({
  channel_id: IdSchema,
  sender_id: IdSchema,
  /** Who may see the envelope; `null` is everyone in the channel. The sender always sees its own envelopes. */
  audience: z.array(IdSchema).max(1024).nullable().default(null),
  event_type: EventTypeSchema,
  /** The event's payload; built-in event types have a schema each (`EVENT_DATA_SCHEMAS`). */
  event_data: z.record(z.string(), z.unknown()).default({}),
  envelope_id: z.union([z.literal(''), IdSchema]).default(''),
  task_id: z.string().max(128).nullable().default(null),
  /** The envelope this one answers; agents use it to answer a trigger at most once. */
  causation_id: z.string().max(128).nullable().default(null),
  trace_id: z.string().max(256).nullable().default(null),
  priority: PrioritySchema.default(Priority.Normal),
  /** Delegation depth: how many delegations deep this envelope was sent. */
  depth: z.number().int().min(0).default(0),
  idempotency_key: z.string().max(256).nullable().default(null),
  created_at: StampSchema.default(''),
  ttl_seconds: z.number().int().min(0).nullable().default(null),
  /** 1-based position in the channel's log; absent until the hub admits the envelope. */
  sequence: z.number().int().positive().optional(),
});
/** An envelope with every field filled in (defaults applied). */
export type Envelope = z.infer<typeof EnvelopeSchema>;
/** What a caller writes to build an envelope: required fields, the rest optional. */
export type EnvelopeInput = z.input<typeof EnvelopeSchema>;

/** Builds a complete envelope from its required fields; throws a `ZodError` on invalid input. */
export function createEnvelope(input: EnvelopeInput): Envelope {
  return EnvelopeSchema.parse(input);
}

/** AG2's `visible_to`: the sender sees its own envelopes; `audience: null` is everyone; else membership. */
export function visibleTo(envelope: Pick<Envelope, 'sender_id' | 'audience'>, participantId: string): boolean {
  if (envelope.sender_id === participantId) return true;
  if (envelope.audience === null) return true;
  return envelope.audience.includes(participantId);
}
