import { Ag2netError, ErrorCode, IdSchema, type HubNames } from '@ag2net/protocol';
import { decode, encodeUser, fmtCreds, type User } from '@nats-io/jwt';
import { fromPublic, fromSeed } from '@nats-io/nkeys';
import { isPublicKey } from './keys.js';
import { identityPermissions, type UserPermissions } from './permissions.js';

/** The longest lifetime of an identity's credentials, in seconds (one day); renewal keeps an identity connected. */
export const MAX_IDENTITY_TTL_SECONDS = 86_400;

/** The default lifetime of an identity's credentials, in seconds (one hour). */
export const DEFAULT_IDENTITY_TTL_SECONDS = 3_600;

/** A bad issuance request: a malformed key, id or lifetime. Code `invalid_request`. */
export class IssuanceError extends Ag2netError {
  override readonly name = 'IssuanceError';
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.InvalidRequest, message, options);
  }
}

/** Options of `issueUserJwt`. */
export interface IssueUserOptions {
  /** The account's public key (`A…`): the account the user belongs to. */
  readonly accountPublicKey: string;
  /** The account signing key's seed (`SA…`), listed in the account JWT's `signing_keys`. */
  readonly accountSigningSeed: string;
  /** The user's public key (`U…`). */
  readonly userPublicKey: string;
  /** The JWT's `name`. */
  readonly name: string;
  /**
   * The user's permissions, written into the JWT; `null` for a user of a scoped signing key, whose permissions are
   * the key's template in the account JWT (the user JWT then carries none, which keeps it small).
   */
  readonly permissions: UserPermissions | null;
  /** Lifetime in seconds from now; absent: no expiry (service users, revoked through the account). */
  readonly ttlSeconds?: number;
  /** Issue time, ms since the epoch; default now. Tests use it to issue credentials that already expired. */
  readonly nowMs?: number;
}

/** A user JWT for `userPublicKey`, signed by the account signing key, with `permissions` and an optional `exp`. */
export async function issueUserJwt(options: IssueUserOptions): Promise<string> {
  if (!isPublicKey(options.userPublicKey, 'U')) throw new IssuanceError('not a user public key');
  if (!isPublicKey(options.accountPublicKey, 'A')) throw new IssuanceError('not an account public key');
  const signer = fromSeed(new TextEncoder().encode(options.accountSigningSeed));
  const scoped = options.permissions === null;
  const user: Partial<User> = options.permissions === null ? {} : jwtPermissions(options.permissions);
  const encodeAt = (nowSeconds: number): Promise<string> => {
    const exp = options.ttlSeconds === undefined ? {} : { exp: nowSeconds + options.ttlSeconds };
    // Signed by the account's own key (the system account has no signing key), the JWT names no issuer account.
    if (signer.getPublicKey() === options.accountPublicKey) {
      return encodeUser(options.name, fromPublic(options.userPublicKey), signer, user, exp);
    }
    return encodeUser(options.name, fromPublic(options.userPublicKey), options.accountPublicKey, user, {
      signer,
      scopedUser: scoped,
      ...exp,
    });
  };
  if (options.nowMs !== undefined) return encodeAt(Math.floor(options.nowMs / 1000));
  // Signing stamps `iat` with the clock's second; a JWT signed across a second boundary is signed again, so that its
  // lifetime (`exp − iat`) is exactly the one asked for.
  for (;;) {
    const nowSeconds = Math.floor(Date.now() / 1000);
    const jwt = await encodeAt(nowSeconds);
    if (issuedAtOf(jwt) === nowSeconds) return jwt;
  }
}

/** The `iat` of a JWT this process just signed. */
function issuedAtOf(jwt: string): number | undefined {
  return decode<User>(jwt).iat;
}

/** Permissions as a JWT holds them (a user's claims or a scoped signing key's template). */
export function jwtPermissions(p: UserPermissions): Partial<User> {
  return {
    pub: { allow: [...p.pub.allow], deny: [...p.pub.deny] },
    sub: { allow: [...p.sub.allow], deny: [...p.sub.deny] },
    // A JWT's response window is a Go duration in nanoseconds.
    ...(p.resp === undefined ? {} : { resp: { max: p.resp.max, ttl: p.resp.ttlMs * 1_000_000 } }),
  };
}

/** Options of `issueIdentityCredentials`. */
export interface IssueIdentityOptions {
  /** The hub account's public key (`A…`). */
  readonly accountPublicKey: string;
  /** The hub account signing key's seed (`SA…`). */
  readonly accountSigningSeed: string;
  /** The identity's public key (`U…`); its seed stays with the identity. */
  readonly identityPublicKey: string;
  /** The identity's agent id: its permissions are pinned to it. */
  readonly agentId: string;
  readonly names: HubNames;
  /** Lifetime in seconds; default `DEFAULT_IDENTITY_TTL_SECONDS`, at most `MAX_IDENTITY_TTL_SECONDS`. */
  readonly ttlSeconds?: number;
  /** Issue time, ms since the epoch; default now. */
  readonly nowMs?: number;
}

/** Issued credentials: the user JWT and its expiry (seconds since the epoch). */
export interface IssuedCredentials {
  readonly jwt: string;
  readonly expiresAt: number;
}

/**
 * Issues an identity's user JWT: for its public key, signed by the hub account's signing key, with the identity's
 * least-privilege permissions (`identityPermissions`) and a bounded lifetime. The JWT is not a secret on its own:
 * connecting also needs the identity's seed, which the hub never sees.
 */
export async function issueIdentityCredentials(options: IssueIdentityOptions): Promise<IssuedCredentials> {
  const agentId = IdSchema.safeParse(options.agentId);
  if (!agentId.success) throw new IssuanceError(`invalid agent id: ${options.agentId}`);
  const ttl = options.ttlSeconds ?? DEFAULT_IDENTITY_TTL_SECONDS;
  if (!Number.isInteger(ttl) || ttl <= 0 || ttl > MAX_IDENTITY_TTL_SECONDS) {
    throw new IssuanceError(`ttlSeconds must be an integer in 1..${MAX_IDENTITY_TTL_SECONDS}, got ${ttl}`);
  }
  const jwt = await issueUserJwt({
    accountPublicKey: options.accountPublicKey,
    accountSigningSeed: options.accountSigningSeed,
    userPublicKey: options.identityPublicKey,
    name: agentId.data,
    permissions: identityPermissions(options.names, agentId.data),
    ttlSeconds: ttl,
    ...(options.nowMs === undefined ? {} : { nowMs: options.nowMs }),
  });
  return { jwt, expiresAt: decode<User>(jwt).exp ?? 0 };
}

/** A standard `.creds` file (the format `nats` tools and every NATS client read) of a user JWT and its seed. */
export function credsFile(jwt: string, seed: string): string {
  return new TextDecoder().decode(fmtCreds(jwt, fromSeed(new TextEncoder().encode(seed.trim()))));
}

const CREDS_BLOCK =
  /-{3,}BEGIN NATS USER JWT-{3,}\s+(\S+)\s+-{3,}END NATS USER JWT-{3,}[\s\S]*?-{3,}BEGIN USER NKEY SEED-{3,}\s+(\S+)\s+-{3,}END USER NKEY SEED-{3,}/;

/** The JWT and seed of a `.creds` file's text; throws `IssuanceError` when it is not one. */
export function parseCredsFile(text: string): { jwt: string; seed: string } {
  const m = CREDS_BLOCK.exec(text);
  const jwt = m?.[1];
  const seed = m?.[2];
  if (jwt === undefined || seed === undefined) throw new IssuanceError('not a .creds file');
  return { jwt, seed };
}
