import { z } from 'zod';
import { TimestampSchema } from '../envelope.js';
import { IdSchema } from '../ids.js';
import { AuthBlockSchema, PassportKindSchema, PassportSchema, ResumeSchema } from '../identity.js';
import { RuleSchema } from '../rule.js';
import { TaskStateSchema } from '../task.js';
import { Access, IdentityReplySchema, IssuedCredentialsSchema, UserPublicKeySchema } from './access.js';
import { Cursor, DEFAULT_MAX_REQUEST_BYTES, Empty, LARGE_REQUEST_BYTES, Limit, NextCursor, Query } from './op-parts.js';

/** An agent's passport, stamped by the hub (id and registration time set). */
const AgentReply = z.strictObject({ passport: PassportSchema });

/** What `revokeIdentity` and `readmitIdentity` answer: the identity, its key, and when it was revoked. */
const AdmissionReply = z.strictObject({
  agent_id: IdSchema,
  name: z.string(),
  /** The nkey user public key its credentials are issued for (`null` on a hub that issues none). */
  public_key: UserPublicKeySchema.nullable(),
  /** When the operator revoked it; `null` once re-admitted. */
  revoked_at: TimestampSchema.nullable(),
});

/**
 * The hub operations of identities and the agent directory (registration, credentials, revocation, passports,
 * résumés, skills, rules, observations); part of `HUB_OPS`, first in its order.
 */
export const AGENT_OPS = {
  register: {
    caller: false,
    access: Access.Public,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: LARGE_REQUEST_BYTES,
    request: z.strictObject({
      passport: PassportSchema,
      resume: ResumeSchema.prefault({}),
      skill_md: z.string().max(65_536).nullable().default(null),
      rule: RuleSchema.nullable().default(null),
      /**
       * The identity's nkey user public key. A hub that issues credentials requires it and answers with a user JWT
       * for it; the identity's seed never leaves its process.
       */
      public_key: UserPublicKeySchema.nullable().default(null),
    }),
    response: IdentityReplySchema,
  },
  /**
   * Fresh credentials for an identity registered earlier, for its registered public key (an identity whose issued JWT
   * expired cannot connect to renew it). The passport's admission credential (`auth`) is checked as at `register`;
   * a public key other than the registered one is refused. Only the holder of that key's seed can use the JWT.
   */
  attach: {
    caller: false,
    access: Access.Public,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({
      name_or_id: Query.min(1),
      public_key: UserPublicKeySchema,
      auth: AuthBlockSchema.prefault({}),
    }),
    response: IdentityReplySchema,
  },
  /** A new JWT for the caller's registered public key, with a new lifetime; refused once the identity is gone. */
  renewCredentials: {
    caller: true,
    access: Access.Self,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: Empty,
    response: z.strictObject({ credentials: IssuedCredentialsSchema }),
  },
  unregister: {
    caller: true,
    access: Access.Self,
    operatorReads: false,
    idempotent: false,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: Empty,
    response: Empty,
  },
  /**
   * The operator revokes an identity until it re-admits it: every call the identity makes is refused as an unknown
   * caller's, and no credentials are issued for it (`register` and `attach` refuse its admission credential like a
   * wrong one). Its channels, inbox and registration stay. NATS keeps accepting JWTs it holds until they expire unless
   * the operator also revokes its key in the account (`ag2net creds revoke` does both, dating the account's
   * revocation at `revoked_at`). Idempotent: revoking a revoked identity answers the first revocation.
   */
  revokeIdentity: {
    caller: true,
    access: Access.Operator,
    operatorReads: true,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({ name_or_id: Query.min(1) }),
    response: AdmissionReply,
  },
  /**
   * The operator re-admits a revoked identity: its next `attach` gets credentials dated after the revocation (JWTs
   * dated at or before it stay refused, by NATS and by the hub). Idempotent.
   */
  readmitIdentity: {
    caller: true,
    access: Access.Operator,
    operatorReads: true,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({ name_or_id: Query.min(1) }),
    response: AdmissionReply,
  },
  getAgent: {
    caller: false,
    access: Access.Public,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({ name_or_id: Query.min(1) }),
    response: AgentReply,
  },
  getResume: {
    caller: false,
    access: Access.Public,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({ agent_id: IdSchema }),
    response: z.strictObject({ resume: ResumeSchema }),
  },
  getSkill: {
    caller: false,
    access: Access.Public,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({ agent_id: IdSchema }),
    response: z.strictObject({ skill_md: z.string().nullable() }),
  },
  getRule: {
    caller: false,
    access: Access.Public,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({ agent_id: IdSchema }),
    response: z.strictObject({ rule: RuleSchema }),
  },
  findAgentId: {
    caller: false,
    access: Access.Public,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({ name: Query.min(1) }),
    response: z.strictObject({ agent_id: IdSchema.nullable() }),
  },
  listAgents: {
    caller: false,
    access: Access.Public,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({
      capability: Query.nullable().default(null),
      query: Query.nullable().default(null),
      kind: PassportKindSchema.nullable().default(null),
      sort_by: z.enum(['name']).nullable().default(null),
      limit: Limit,
      cursor: Cursor,
    }),
    response: z.strictObject({ agents: z.array(PassportSchema), next_cursor: NextCursor }),
  },
  setResume: {
    caller: true,
    access: Access.Self,
    operatorReads: false,
    idempotent: false,
    maxRequestBytes: LARGE_REQUEST_BYTES,
    request: z.strictObject({ resume: ResumeSchema }),
    response: z.strictObject({ resume: ResumeSchema }),
  },
  setSkill: {
    caller: true,
    access: Access.Self,
    operatorReads: false,
    idempotent: true,
    maxRequestBytes: LARGE_REQUEST_BYTES,
    request: z.strictObject({ skill_md: z.string().max(65_536).nullable() }),
    response: Empty,
  },
  setRule: {
    caller: true,
    access: Access.Self,
    operatorReads: false,
    idempotent: false,
    maxRequestBytes: LARGE_REQUEST_BYTES,
    request: z.strictObject({ rule: RuleSchema }),
    response: z.strictObject({ rule: RuleSchema }),
  },
  recordObservation: {
    caller: true,
    access: Access.Self,
    operatorReads: false,
    idempotent: false,
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    request: z.strictObject({
      capability: Query.min(1),
      outcome: TaskStateSchema,
      latency_ms: z.number().min(0).nullable().default(null),
      /** Also a KV key (`observed.<task_id>`), hence an id. */
      task_id: IdSchema.nullable().default(null),
    }),
    response: z.strictObject({ resume: ResumeSchema }),
  },
} as const;
