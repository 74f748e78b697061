import { TimestampSchema } from '@ag2net/protocol';
import { z } from 'zod';
import type { CallerCredentials, CallerDirectory } from './caller-gate.js';

/**
 * The stored `<agent_id>.credentials` part of a registered identity on a hub that issues credentials: which of its
 * JWTs are still honoured, and whether the operator revoked it.
 *
 * An identity has at most two JWTs that are valid at any moment: `current`, the newest the hub issued, and the one
 * it replaced (`previous_issued_at`), which the hub replaces only once it has at most half of its lifetime left.
 * So `renewCredentials` and `attach` hand `current` out again while it has more than half of its life ahead (300
 * renewals in a row yield one JWT; a client renewing at two thirds of a lifetime always gets a new one), and every
 * JWT older than the one replaced has expired at NATS too: it was replaced with at most half a lifetime left, at
 * least half a lifetime before.
 */
export const StoredCredentialsSchema = z.strictObject({
  /** The newest JWT the hub issued the identity; `null` before the first one and after a re-admission. */
  current: z
    .strictObject({
      jwt: z.string().min(1).max(16_384),
      /** `iat`, unix seconds. */
      issued_at: z.number().int().min(0),
      /** `exp`, unix seconds. */
      expires_at: z.number().int().min(0),
    })
    .nullable(),
  /** `iat` of the JWT `current` replaced, honoured until it expires (within a third of a lifetime). */
  previous_issued_at: z.number().int().min(0).nullable(),
  /**
   * JWTs issued before this time (unix seconds) are retired: the hub refuses every call made with one. It is
   * `current`'s `iat`, or, after a re-admission, the second after the revocation.
   */
  not_before: z.number().int().min(0),
  /** When the operator revoked the identity; `null` while it is admitted. */
  revoked_at: TimestampSchema.nullable(),
});
export type StoredCredentials = z.infer<typeof StoredCredentialsSchema>;

/** The state of an identity the hub never issued credentials to. */
export const NO_CREDENTIALS: StoredCredentials = {
  current: null,
  previous_issued_at: null,
  not_before: 0,
  revoked_at: null,
};

/** What the caller gate needs of a stored state. */
export function callerCredentials(state: StoredCredentials): CallerCredentials {
  return {
    revoked: state.revoked_at !== null,
    notBefore: state.not_before,
    previousIssuedAt: state.previous_issued_at,
  };
}

/** What `callerDirectory` reads of the registry: each identity's stored credential state. */
export interface CredentialRecords {
  get(agentId: string): { readonly credentials: StoredCredentials | null } | undefined;
}

/** The caller directory of a hub: the credential state of each registered identity it issued credentials to. */
export function callerDirectory(ctx: { readonly registry: CredentialRecords }): CallerDirectory {
  return {
    credentialsOf: (agentId) => {
      const state = ctx.registry.get(agentId)?.credentials;
      return state === null || state === undefined ? undefined : callerCredentials(state);
    },
  };
}

/**
 * Whether `current` may be handed out again at `nowMs` rather than replaced: it has more than half of its lifetime
 * ahead.
 */
export function stillFresh(current: NonNullable<StoredCredentials['current']>, nowMs: number): boolean {
  const lifetime = current.expires_at - current.issued_at;
  return current.expires_at - nowMs / 1000 > lifetime / 2;
}
