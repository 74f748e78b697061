import { fromSeed } from '@nats-io/nkeys';
import { z } from 'zod';
import { AuthFile, readIfExists, writePrivate } from './files.js';
import { encodeAccounts, readManifest, renderDirConfig } from './init.js';
import { isPublicKey } from './keys.js';
import type { AuthManifest } from './manifest.js';
import { join, resolve } from 'node:path';

/** Options of `revokeUser`. */
export interface RevokeUserOptions {
  /** The auth directory `authInit` laid out. */
  readonly dir: string;
  /** The user's public key (`U…`). */
  readonly userPublicKey: string;
  /** Every JWT of the user issued at or before this time (unix seconds) is refused; default now. */
  readonly atSeconds?: number;
}

/** The re-signed account after a revocation. */
export interface RevokedAccount {
  /** The account the user belongs to: the data account for its service users, else the identity account. */
  readonly accountPublicKey: string;
  /** The account's new JWT: push it to running servers (`pushAccountJwt`); `auth.conf` already holds it. */
  readonly accountJwt: string;
  readonly manifest: AuthManifest;
}

/**
 * Revokes a user: records the revocation in the manifest under its account (the data account for the hub-service
 * and admin users, the identity account for everyone else: identities, the registrant, the operator caller),
 * re-signs the account JWTs with the operator signing key and rewrites them and `auth.conf`, so that a restarted
 * server refuses the user. A running server learns it from `pushAccountJwt`, and then also closes the user's open
 * connections. A later JWT for the same key (issued after `atSeconds`) is accepted again: the hub issues none to an
 * identity the operator revoked (`revokeIdentity`) until the operator re-admits it.
 */
export async function revokeUser(options: RevokeUserOptions): Promise<RevokedAccount> {
  if (!isPublicKey(options.userPublicKey, 'U')) throw new Error('not a user public key');
  const dir = resolve(options.dir);
  const previous = await readManifest(join(dir, AuthFile.manifest));
  if (previous === null) throw new Error(`${dir} holds no manifest: run auth init first`);
  const at = options.atSeconds ?? Math.floor(Date.now() / 1000);
  const user = options.userPublicKey;
  const inData = user === previous.users.hub_service || user === previous.users.admin;
  const manifest: AuthManifest = {
    ...previous,
    revocations: inData
      ? { ...previous.revocations, data: { ...previous.revocations.data, [user]: at } }
      : { ...previous.revocations, identity: { ...previous.revocations.identity, [user]: at } },
  };
  const signingSeed = await readIfExists(join(dir, AuthFile.operatorSigningSeed));
  if (signingSeed === null) throw new Error(`${dir} holds no operator signing key`);
  const jwts = await encodeAccounts(manifest, fromSeed(new TextEncoder().encode(signingSeed.trim())));
  await writePrivate(join(dir, AuthFile.dataAccountJwt), `${jwts.data}\n`);
  await writePrivate(join(dir, AuthFile.identityAccountJwt), `${jwts.identity}\n`);
  await writePrivate(join(dir, AuthFile.manifest), `${JSON.stringify(manifest, null, 2)}\n`);
  await renderDirConfig(dir, manifest, jwts);
  return inData
    ? { accountPublicKey: manifest.data_account.public_key, accountJwt: jwts.data, manifest }
    : { accountPublicKey: manifest.identity_account.public_key, accountJwt: jwts.identity, manifest };
}

/** The part of a NATS connection `pushAccountJwt` needs (a connection of the system account's user). */
export interface SystemRequester {
  request(subject: string, payload: string, options: { timeout: number }): Promise<{ string(): string }>;
}

/** How long `pushAccountJwt` waits for the server's answer, in ms. */
export const DEFAULT_PUSH_TIMEOUT_MS = 5_000;

/** The server's reply to a claims update: `{ data: { code, message } }` or `{ error: { code, description } }`. */
const ClaimsUpdateReplySchema = z.looseObject({
  data: z.looseObject({ code: z.number(), message: z.string().optional() }).optional(),
  error: z.looseObject({ code: z.number().optional(), description: z.string().optional() }).optional(),
});

/**
 * Sends an account JWT to a running server over the system account (`$SYS.REQ.ACCOUNT.<account>.CLAIMS.UPDATE`);
 * the memory resolver applies it at once (and closes the connections of newly revoked users). Connect with the
 * directory's `system-user.creds`. Resolves when the server accepted it; rejects with its reason otherwise.
 */
export async function pushAccountJwt(
  nc: SystemRequester,
  account: { accountPublicKey: string; accountJwt: string },
  options: { timeout?: number } = {},
): Promise<void> {
  const msg = await nc.request(`$SYS.REQ.ACCOUNT.${account.accountPublicKey}.CLAIMS.UPDATE`, account.accountJwt, {
    timeout: options.timeout ?? DEFAULT_PUSH_TIMEOUT_MS,
  });
  const reply = ClaimsUpdateReplySchema.safeParse(JSON.parse(msg.string()));
  if (!reply.success) throw new Error(`unexpected claims update reply: ${msg.string()}`);
  if (reply.data.error !== undefined || reply.data.data === undefined) {
    throw new Error(`the server refused the account JWT: ${reply.data.error?.description ?? msg.string()}`);
  }
}
