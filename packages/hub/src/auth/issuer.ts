import {
  DEFAULT_IDENTITY_TTL_SECONDS,
  MAX_IDENTITY_TTL_SECONDS,
  identityInboxPrefix,
  isPublicKey,
  issueIdentityCredentials,
  keysFromSeed,
} from '@ag2net/auth';
import type { HubNames, IssuedCredentials } from '@ag2net/protocol';

/**
 * What a hub needs to issue identities their NATS credentials: the hub account and its signing key (`auth init`
 * writes them: `manifest.json`'s `hub_account.public_key` and `hub-account-signing.nk`).
 */
export interface CredentialsIssuerOptions {
  /** The hub account's public key (`A…`). */
  readonly accountPublicKey: string;
  /** The seed (`SA…`) of a signing key of the hub account (listed in the account JWT's `signing_keys`). */
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
  /** A fresh user JWT for `publicKey`, with the permissions of identity `agentId` and this issuer's lifetime. */
  issue(agentId: string, publicKey: string): Promise<IssuedCredentials>;
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
    async issue(agentId, publicKey) {
      // NATS judges the expiry by the server's wall clock, so the JWT is dated by this process's wall clock, never by
      // the hub's (possibly manual) clock.
      const nowMs = Date.now();
      const issued = await issueIdentityCredentials({
        accountPublicKey: options.accountPublicKey,
        accountSigningSeed: options.signingSeed,
        identityPublicKey: publicKey,
        agentId,
        names,
        ttlSeconds,
        nowMs,
      });
      return {
        jwt: issued.jwt,
        expires_at: new Date(issued.expiresAt * 1000).toISOString(),
        inbox_prefix: identityInboxPrefix(agentId),
      };
    },
  };
}
