import {
  DEFAULT_IDENTITY_TTL_SECONDS,
  MAX_IDENTITY_TTL_SECONDS,
  identityInboxPrefix,
  isPublicKey,
  issueIdentityCredentials,
  keysFromSeed,
} from '@ag2net/auth';
import { UnavailableError, type HubNames, type IssuedCredentials } from '@ag2net/protocol';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';

/** The longest an issuance waits for the second it must be dated in, in ms. */
const MAX_DATING_WAIT_MS = 2_000;

/** The `iat` claim of a JWT this process just signed. */
function issuedAtOf(jwt: string): number {
  const payload = Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8');
  return z.object({ iat: z.number().int() }).parse(JSON.parse(payload)).iat;
}

/**
 * What a hub needs to issue identities their NATS credentials: the identity account and its signing key (`auth init`
 * writes them: `manifest.json`'s `identity_account.public_key` and `identity-account-signing.nk`).
 */
export interface CredentialsIssuerOptions {
  /** The identity account's public key (`A…`): identities connect to it, and their requests come from it. */
  readonly accountPublicKey: string;
  /** The seed (`SA…`) of a signing key of the identity account (listed in the account JWT's `signing_keys`). */
  readonly signingSeed: string;
  /**
   * Lifetime of an issued JWT, in seconds; default 3 600 (one hour), at most 86 400. An identity renews before it
   * lapses (`renewCredentials`); NATS refuses a connection with a lapsed JWT and closes one whose JWT lapses.
   */
  readonly ttlSeconds?: number;
}

/** Issues identity credentials for one hub; every hub of a prefix issues with the same signing key. */
export interface CredentialsIssuer {
  readonly ttlSeconds: number;
  /** The account the identities' JWTs are issued into (the identity account): their requests come from it. */
  readonly accountPublicKey: string;
  /**
   * A fresh user JWT for `publicKey`, with the permissions of identity `agentId` and this issuer's lifetime, dated
   * now or, when later, at `notBeforeSeconds` (unix seconds): a JWT dated at or before a revocation of its key is
   * refused by NATS, so one issued after a re-admission is dated after it.
   */
  issue(agentId: string, publicKey: string, notBeforeSeconds?: number): Promise<IssuedJwt>;
}

/** A JWT the issuer made: what the identity gets, and the JWT's `iat` and `exp` (unix seconds). */
export interface IssuedJwt {
  readonly credentials: IssuedCredentials;
  readonly issuedAt: number;
  readonly expiresAt: number;
}

/**
 * The issuer of a hub's options; throws `TypeError` at start when they are malformed (a bad key, seed or lifetime),
 * rather than at the first registration.
 */
export function createCredentialsIssuer(options: CredentialsIssuerOptions, names: HubNames): CredentialsIssuer {
  if (!isPublicKey(options.accountPublicKey, 'A')) {
    throw new TypeError('credentials.accountPublicKey is not an account public key (A…)');
  }
  let signingKey: string;
  try {
    signingKey = keysFromSeed(options.signingSeed).publicKey;
  } catch (err) {
    throw new TypeError('credentials.signingSeed is not an nkey seed', { cause: err });
  }
  if (!isPublicKey(signingKey, 'A')) throw new TypeError('credentials.signingSeed is not an account seed (SA…)');
  const ttlSeconds = options.ttlSeconds ?? DEFAULT_IDENTITY_TTL_SECONDS;
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > MAX_IDENTITY_TTL_SECONDS) {
    throw new TypeError(
      `credentials.ttlSeconds must be an integer in 1..${MAX_IDENTITY_TTL_SECONDS}, got ${ttlSeconds}`,
    );
  }
  return {
    ttlSeconds,
    accountPublicKey: options.accountPublicKey,
    async issue(agentId, publicKey, notBeforeSeconds = 0) {
      // NATS judges `iat` and `exp` by the server's wall clock, so the JWT is dated by this process's wall clock,
      // never by the hub's (possibly manual) clock; signing stamps `iat` with the current second, so a JWT that must
      // be dated later waits for that second.
      const waitMs = notBeforeSeconds * 1000 - Date.now();
      if (waitMs > MAX_DATING_WAIT_MS) {
        throw new UnavailableError(`credentials cannot be dated yet: retry in ${waitMs} ms`, {
          details: { retry_after_ms: waitMs },
        });
      }
      if (waitMs > 0) await sleep(waitMs);
      const issued = await issueIdentityCredentials({
        accountPublicKey: options.accountPublicKey,
        accountSigningSeed: options.signingSeed,
        identityPublicKey: publicKey,
        agentId,
        names,
        ttlSeconds,
      });
      return {
        credentials: {
          jwt: issued.jwt,
          expires_at: new Date(issued.expiresAt * 1000).toISOString(),
          inbox_prefix: identityInboxPrefix(agentId),
        },
        issuedAt: issuedAtOf(issued.jwt),
        expiresAt: issued.expiresAt,
      };
    },
  };
}
