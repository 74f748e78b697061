/**
 * Decentralized NATS auth of an ag2net hub (nats-server 2.9 operator mode): `authInit` lays out the operator, the
 * accounts, the service users and the server config; `issueIdentityCredentials` issues an identity's short-lived
 * user JWT with least-privilege permissions; the permission sets say exactly what each kind of user may do;
 * `personSeed` derives a person's key from a deployment's bridge secret.
 *
 * @example
 * ```ts
 * import { authInit, createIdentityKeys, credsFile, issueIdentityCredentials } from '@ag2net/auth';
 * import { keysFromSeed, personSeed } from '@ag2net/auth';
 *
 * const auth = await authInit({ dir: '.data/auth', prefix: 'ag2' }); // then: nats-server -c .data/auth/server.conf
 * const keys = createIdentityKeys(); // the identity keeps keys.seed
 * const { jwt } = await issueIdentityCredentials({
 *   accountPublicKey: auth.manifest.identity_account.public_key,
 *   accountSigningSeed: identitySigningSeed, // the hub reads it from identity-account-signing.nk
 *   identityPublicKey: keys.publicKey,
 *   agentId,
 *   names: hubNames('ag2'),
 * });
 * const creds = credsFile(jwt, keys.seed); // connect with credsAuthenticator and inboxPrefix identityInboxPrefix(agentId)
 *
 * // A person's key, derived from the bridge's secret: the bridge and the ag2net command derive the same one.
 * const alice = keysFromSeed(personSeed(bridgeSecret, 'alice'));
 * ```
 */
export { authInit, readManifest } from './init.js';
export { pushAccountJwt, revokeUser } from './revoke.js';
export type { RevokeUserOptions, RevokedAccount, SystemRequester } from './revoke.js';
export type { AccountJwts, AuthInitOptions, AuthLayout } from './init.js';
export { AuthFile } from './files.js';
export { credsServerKey } from './creds-dir.js';
export { AuthManifestSchema } from './manifest.js';
export type { AuthManifest } from './manifest.js';
export {
  DEFAULT_IDENTITY_TTL_SECONDS,
  MAX_IDENTITY_TTL_SECONDS,
  IssuanceError,
  credsFile,
  issueIdentityCredentials,
  parseCredsFile,
} from './issue.js';
export type { IssueIdentityOptions, IssuedCredentials } from './issue.js';
export { createIdentityKeys, isPublicKey, keysFromSeed } from './keys.js';
export type { NkeyPair } from './keys.js';
export { personSeed } from './person-keys.js';
export {
  hubServiceInboxPrefix,
  identityInboxPrefix,
  identityPermissions,
  operatorCallerInboxPrefix,
  operatorCallerPermissions,
  registrantInboxPrefix,
  registrantPermissions,
} from './permissions.js';
export type { UserPermissions } from './permissions.js';
