import { Ag2netError, ErrorCode, IdSchema } from '@ag2net/protocol';
import { createUser, fromSeed } from '@nats-io/nkeys';
import { chmod, readFile, rename, writeFile } from 'node:fs/promises';
import { z } from 'zod';

/** The reply-inbox prefix of a connection without credentials, or whose credentials allow any subscription. */
export const DEFAULT_INBOX_PREFIX = '_INBOX';

/** A user JWT and the seed of the nkey it was issued for: what a NATS connection authenticates with. */
export interface UserCredentials {
  readonly jwt: string;
  readonly seed: string;
}

/**
 * The claims of a NATS user JWT the client reads. Only the fields it uses are named; the rest pass through.
 * `nats.sub.allow` lists the subjects the user may subscribe to, `exp` and `iat` are seconds since the epoch.
 */
const UserClaimsSchema = z.looseObject({
  sub: z.string(),
  name: z.string().optional(),
  iat: z.number().optional(),
  exp: z.number().optional(),
  nats: z
    .looseObject({
      sub: z.looseObject({ allow: z.array(z.string()).optional() }).optional(),
    })
    .optional(),
});
export type UserClaims = z.infer<typeof UserClaimsSchema>;

/** Credentials that are not a user JWT, or not a `.creds` file. Code `invalid_config`. Local, never on the wire. */
export class CredentialsError extends Ag2netError {
  override readonly name = 'CredentialsError';
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.InvalidConfig, message, options);
  }
}

/**
 * The claims of a user JWT, decoded without checking its signature. That is safe because the client only reads
 * what it was given for itself (its reply-inbox prefix, its expiry, its agent id): nats-server verifies the JWT
 * when the connection authenticates and enforces its permissions, so a wrong claim read here can only make this
 * client's own requests fail, never grant anything.
 */
export function decodeUserClaims(jwt: string): UserClaims {
  const payload = jwt.split('.')[1];
  if (payload === undefined) throw new CredentialsError('not a JWT: no payload part');
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch (err) {
    throw new CredentialsError('not a JWT: the payload is not base64url JSON', { cause: err });
  }
  const claims = UserClaimsSchema.safeParse(json);
  if (!claims.success) throw new CredentialsError('not a user JWT', { cause: claims.error });
  return claims.data;
}

/**
 * The reply-inbox prefix a user JWT allows: the `X` of its subscribe permission `X.>` (an identity's
 * `_INBOX_<id>`, the registrant's `_REGISTRANT_INBOX_<prefix>`); `_INBOX` when the JWT lets the user subscribe
 * anywhere (no subscribe allow-list, `>` or `_INBOX.>`). Requests on a connection whose prefix the server denies
 * would never see their replies, so the prefix always comes from the credentials.
 */
export function inboxPrefixOf(jwt: string): string {
  const allow = decodeUserClaims(jwt).nats?.sub?.allow ?? [];
  if (allow.length === 0 || allow.includes('>') || allow.includes(`${DEFAULT_INBOX_PREFIX}.>`)) {
    return DEFAULT_INBOX_PREFIX;
  }
  for (const subject of allow) {
    const m = /^(_[A-Za-z0-9_-]+)\.>$/.exec(subject);
    if (m?.[1] !== undefined) return m[1];
  }
  return DEFAULT_INBOX_PREFIX;
}

/** The agent id a hub-issued identity JWT is for (its `name` claim), or `null` when it names none. */
export function agentIdOf(jwt: string): string | null {
  const id = IdSchema.safeParse(decodeUserClaims(jwt).name);
  return id.success ? id.data : null;
}

/** When a user JWT stops being accepted, in ms since the epoch; `null` when it does not expire. */
export function expiresAtOf(jwt: string): number | null {
  const exp = decodeUserClaims(jwt).exp;
  return exp === undefined ? null : exp * 1000;
}

/** A fresh nkey user pair: the public key (`U…`) goes to the hub, the seed (`SU…`) never leaves this process. */
export function createIdentityKeys(): { readonly publicKey: string; readonly seed: string } {
  const pair = createUser();
  return { publicKey: pair.getPublicKey(), seed: new TextDecoder().decode(pair.getSeed()) };
}

/** The public key of a user seed. */
export function publicKeyOf(seed: string): string {
  return fromSeed(new TextEncoder().encode(seed.trim())).getPublicKey();
}

/** A standard `.creds` file of a user JWT and its seed (the format every NATS client and the `nats` tool read). */
export function formatCreds(credentials: UserCredentials): string {
  return [
    '-----BEGIN NATS USER JWT-----',
    credentials.jwt,
    '------END NATS USER JWT------',
    '',
    '************************* IMPORTANT *************************',
    'NKEY Seed printed below can be used to sign and prove identity.',
    'NKEYs are sensitive and should be treated as secrets.',
    '',
    '-----BEGIN USER NKEY SEED-----',
    credentials.seed.trim(),
    '------END USER NKEY SEED------',
    '',
    '*************************************************************',
    '',
  ].join('\n');
}

const CREDS_BLOCK =
  /-{3,}BEGIN NATS USER JWT-{3,}\s+(\S+)\s+-{3,}END NATS USER JWT-{3,}[\s\S]*?-{3,}BEGIN USER NKEY SEED-{3,}\s+(\S+)\s+-{3,}END USER NKEY SEED-{3,}/;

/** The JWT and seed of a `.creds` file's text; `CredentialsError` when it is not one. */
export function parseCreds(text: string): UserCredentials {
  const m = CREDS_BLOCK.exec(text);
  const jwt = m?.[1];
  const seed = m?.[2];
  if (jwt === undefined || seed === undefined) throw new CredentialsError('not a .creds file');
  return { jwt, seed };
}

/** `.creds` text, or the path of a `.creds` file, as credentials. */
export async function loadCreds(textOrPath: string): Promise<UserCredentials> {
  if (textOrPath.includes('BEGIN NATS USER JWT')) return parseCreds(textOrPath);
  let text: string;
  try {
    text = await readFile(textOrPath, 'utf8');
  } catch (err) {
    throw new CredentialsError(`cannot read the credentials file ${textOrPath}`, { cause: err });
  }
  try {
    return parseCreds(text);
  } catch (err) {
    throw new CredentialsError(`${textOrPath} is not a .creds file`, { cause: err });
  }
}

/** The credentials persisted at `path`, or `null` when there is no such file. */
export async function readCredsFile(path: string): Promise<UserCredentials | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return null;
    throw new CredentialsError(`cannot read the credentials file ${path}`, { cause: err });
  }
  try {
    return parseCreds(text);
  } catch (err) {
    throw new CredentialsError(`${path} is not a .creds file`, { cause: err });
  }
}

/**
 * Persists credentials at `path` as a `.creds` file readable by its owner only (0600). The file is written beside
 * and renamed into place, so a reader (another replica, the next start) never sees half a file.
 */
export async function writeCredsFile(path: string, credentials: UserCredentials): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, formatCreds(credentials), { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, path);
}
