import type { z } from 'zod';
import { ChannelManifestSchema, ChannelMetadataSchema, ExpectationSchema, ParticipantSchema } from './channel.js';
import { EnvelopeSchema } from './envelope.js';
import { WireErrorSchema } from './errors.js';
import {
  ChannelEndDataSchema,
  ChannelRefDataSchema,
  ContextSetDataSchema,
  ExpectationViolatedDataSchema,
  InviteDataSchema,
  InviteRejectDataSchema,
  PacketDataSchema,
  TaskCancelDataSchema,
  TextDataSchema,
  TurnFailedDataSchema,
} from './event-data.js';
import { FinishSchema, HandoffSchema } from './handoff.js';
import { PassportSchema, ResumeSchema } from './identity.js';
import { RuleSchema } from './rule.js';
import { TaskMetadataSchema } from './task.js';
import { ViolationRecordSchema } from './violation.js';

/**
 * Every wire type by name. The JSON Schema files in `docs/schemas/<Name>.schema.json` and the golden fixtures in
 * `packages/protocol/test/fixtures/<Name>/` are generated from and checked against this table.
 */
export const WIRE_SCHEMAS = {
  Envelope: EnvelopeSchema,
  ChannelManifest: ChannelManifestSchema,
  ChannelMetadata: ChannelMetadataSchema,
  Participant: ParticipantSchema,
  Expectation: ExpectationSchema,
  Passport: PassportSchema,
  Resume: ResumeSchema,
  Rule: RuleSchema,
  TaskMetadata: TaskMetadataSchema,
  Handoff: HandoffSchema,
  Finish: FinishSchema,
  WireError: WireErrorSchema,
  TextData: TextDataSchema,
  PacketData: PacketDataSchema,
  InviteData: InviteDataSchema,
  InviteRejectData: InviteRejectDataSchema,
  ChannelRefData: ChannelRefDataSchema,
  ChannelEndData: ChannelEndDataSchema,
  ExpectationViolatedData: ExpectationViolatedDataSchema,
  ViolationRecord: ViolationRecordSchema,
  ContextSetData: ContextSetDataSchema,
  TaskCancelData: TaskCancelDataSchema,
  TurnFailedData: TurnFailedDataSchema,
} as const satisfies Readonly<Record<string, z.ZodType>>;

export type WireTypeName = keyof typeof WIRE_SCHEMAS;
