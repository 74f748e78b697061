import { Ag2netError, ErrorCode, type HubResponse, type Passport } from '@ag2net/protocol';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  agentIdOf,
  decodeUserClaims,
  inboxPrefixOf,
  readCredsFile,
  writeCredsFile,
  type UserCredentials,
} from './credentials.js';
import type { Logger } from './logger.js';
import type { CredentialLifetime } from './renewal.js';

/** Persisted credentials that expire sooner than this are treated as expired: fresh ones are asked for, in ms. */
const EXPIRY_MARGIN_MS = 5_000;
/** How long `attach` looks for the credentials another replica is persisting after it won the registration, ms. */
const RACED_WAIT_MS = 3_000;
const RACED_POLL_MS = 100;

/** The identity's credentials cannot be used (they belong to another identity, or are missing). Code `auth_failed`. Local. */
export class IdentityCredentialsError extends Ag2netError {
  override readonly name = 'IdentityCredentialsError';
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.AuthFailed, message, options);
  }
}

/** An identity's NATS credentials as its connection uses them. */
export interface IdentityCredentials {
  readonly user: UserCredentials;
  /** The reply-inbox prefix its connection must use. */
  readonly inboxPrefix: string;
  readonly lifetime: CredentialLifetime;
  /** Where they are persisted, or `null`. */
  readonly credsPath: string | null;
  /** Persists renewed credentials at `credsPath` (nothing without one); a failure is logged, not thrown. */
  persist(user: UserCredentials, logger: Logger): Promise<void>;
}

/** A registered identity: its stamped passport and, from a hub that issues them, its credentials. */
export interface IdentityGrant {
  readonly passport: Passport;
  readonly credentials: IdentityCredentials | null;
}

/**
 * The identity a `register` or `attach` reply grants, with `seed` (the key the request named). Issued credentials
 * are persisted at `credsPath` (0600) before they are used, so that a crash right after registering still leaves
 * the identity attachable.
 */
export async function issuedIdentity(
  reply: HubResponse<'register'>,
  options: { readonly seed: string; readonly credsPath: string | undefined },
): Promise<IdentityGrant> {
  const issued = reply.credentials;
  if (issued === null) return { passport: reply.passport, credentials: null };
  const user = { jwt: issued.jwt, seed: options.seed };
  const credsPath = options.credsPath ?? null;
  if (credsPath !== null) await writeCredsFile(credsPath, user);
  return {
    passport: reply.passport,
    credentials: identityCredentials(user, {
      inboxPrefix: issued.inbox_prefix,
      lifetime: lifetimeOf(user.jwt, Date.parse(issued.expires_at)),
      credsPath,
    }),
  };
}

/**
 * Persisted credentials that can still connect, with the agent id their JWT names; `null` when they expired (or
 * are about to), so that fresh ones must be asked for with the `attach` operation.
 */
export function usableCredentials(
  user: UserCredentials,
  credsPath: string,
): { readonly agentId: string; readonly credentials: IdentityCredentials } | null {
  const agentId = agentIdOf(user.jwt);
  if (agentId === null) throw new IdentityCredentialsError(`${credsPath} holds no identity's credentials`);
  const exp = decodeUserClaims(user.jwt).exp;
  const expiresAtMs = exp === undefined ? Number.POSITIVE_INFINITY : exp * 1000;
  if (expiresAtMs - Date.now() <= EXPIRY_MARGIN_MS) return null;
  return {
    agentId,
    credentials: identityCredentials(user, {
      inboxPrefix: inboxPrefixOf(user.jwt),
      lifetime: lifetimeOf(user.jwt, expiresAtMs),
      credsPath,
    }),
  };
}

/**
 * The credentials persisted at `path`; `null` when there are none. After losing a registration race (`raced`),
 * waits a little for the winner, another replica of the same identity, to persist them.
 */
export async function waitForPersisted(path: string, raced: boolean): Promise<UserCredentials | null> {
  const deadline = Date.now() + (raced ? RACED_WAIT_MS : 0);
  for (;;) {
    const found = await readCredsFile(path);
    if (found !== null || Date.now() >= deadline) return found;
    await sleep(RACED_POLL_MS);
  }
}

function identityCredentials(
  user: UserCredentials,
  fields: { inboxPrefix: string; lifetime: CredentialLifetime; credsPath: string | null },
): IdentityCredentials {
  const { credsPath } = fields;
  return {
    user,
    ...fields,
    async persist(renewed, logger) {
      if (credsPath === null) return;
      try {
        await writeCredsFile(credsPath, renewed);
      } catch (err) {
        logger.error({ err, credsPath }, 'persisting renewed credentials failed');
      }
    },
  };
}

/** A JWT's lifetime: from its `iat` (or now) to `expiresAtMs`; a JWT without expiry is renewed never. */
function lifetimeOf(jwt: string, expiresAtMs: number): CredentialLifetime {
  const iat = decodeUserClaims(jwt).iat;
  return { issuedAtMs: iat === undefined ? Date.now() : iat * 1000, expiresAtMs };
}
