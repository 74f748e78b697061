import { z } from 'zod';
import { TimestampSchema } from '../envelope.js';
import { IdSchema } from '../ids.js';
import { PassportSchema } from '../identity.js';

/**
 * Who may call an operation, declared once per op in `HUB_OPS` and enforced by the hub's RPC server before any
 * handler runs:
 * - `public`: anyone connected; the subject carries no caller (registration, the agent directory, health).
 * - `self`: a registered identity acting on itself; the caller is the last subject token. An unknown or unregistered
 *   caller is refused with `access_denied`.
 * - `participant`: a registered identity that is a participant of the channel named by the request's `channel_id`.
 *   An unknown channel is `not_found` for everyone alike, and so is, for a registered identity outside it, a read of
 *   the channel (`getChannel`, `readWal`, `findEnvelopeByCausation`, `canSend`, `adapterState`): a hidden channel
 *   answers exactly like a missing one. Its acts on the channel (`closeChannel`, turn locks, `reportTurnFailure`)
 *   are refused with `access_denied`; its `post` with AG2's `protocol_error` for a non-participant's send, never
 *   admitted.
 * - `operator`: only the operator caller (`OPERATOR_CALLER`).
 *
 * With NATS permissions in place an identity can publish only on its own `<p>.hub.v1.*.<id>` subjects, so the
 * caller token is the identity NATS authenticated; on a hub without auth the token is a claim anyone can make.
 */
export const Access = {
  Public: 'public',
  Self: 'self',
  Participant: 'participant',
  Operator: 'operator',
} as const;
export type Access = (typeof Access)[keyof typeof Access];

/**
 * The caller token of the deployment's operator: `<p>.hub.v1.<op>.$operator`. It is not a valid identity id (`$` is
 * outside `IdSchema`), so no identity can be registered under it, and only the operator's credentials (and the
 * hub-service's) may publish on it. Operations whose `operatorReads` is true accept it and show the operator
 * everything (the full log, every channel, every task, the audit trail).
 */
export const OPERATOR_CALLER = '$operator';

/** A caller token in an RPC subject: an identity id or `OPERATOR_CALLER`. */
export const CallerSchema = z.union([IdSchema, z.literal(OPERATOR_CALLER)]);

/** An nkey user public key (`U…`, 56 characters of base32): what an identity's credentials are issued for. */
export const UserPublicKeySchema = z
  .string()
  .regex(/^U[A-Z2-7]{55}$/, 'not an nkey user public key (U followed by 55 base32 characters)');

/**
 * NATS credentials the hub issued to an identity: a user JWT for the identity's own public key (its seed never
 * leaves the identity's process), when it stops being accepted, and the reply-inbox prefix the identity's connection
 * must use (`inboxPrefix` in nats.js), the only one it may subscribe to.
 */
export const IssuedCredentialsSchema = z.strictObject({
  jwt: z.string().min(1).max(16_384),
  expires_at: TimestampSchema,
  inbox_prefix: z.string().min(1).max(160),
});
export type IssuedCredentials = z.infer<typeof IssuedCredentialsSchema>;

/** What `register` and `attach` answer: the stamped passport and, on a hub that issues credentials, the identity's. */
export const IdentityReplySchema = z.strictObject({
  passport: PassportSchema,
  credentials: IssuedCredentialsSchema.nullable(),
});

/** A turn lock's holder: the id of one replica of an agent (a process hosting it). */
export const TurnLockHolderSchema = IdSchema;
