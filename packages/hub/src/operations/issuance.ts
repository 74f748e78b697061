import { identityInboxPrefix } from '@ag2net/auth';
import { repr } from '@ag2net/protocol/internal';
import { AccessDeniedError, type IssuedCredentials } from '@ag2net/protocol';
import { NO_CREDENTIALS, stillFresh, type StoredCredentials } from '../auth/credential-state.js';
import type { AgentRecord } from '../stores/registry.js';
import { refusedAdmission } from '../auth/authenticator.js';
import type { HomeStores, HubEnv } from '../partition/hub-parts.js';

/** What issuing an identity its credentials uses. */
export type IssueDeps = Pick<HubEnv, 'logger'> & Pick<HomeStores, 'issuer' | 'registry'>;

/**
 * Credentials for a registered identity's key; `null` on a hub that issues none. The newest JWT is handed out again
 * while it has more than half of its lifetime ahead; otherwise a new one is issued, dated no earlier than
 * `not_before`, and becomes the newest: the one it replaced stays honoured until it expires, every older one is
 * retired. A revoked identity gets none: its admission is refused like a wrong key's.
 */
export async function issueFor(ctx: IssueDeps, record: AgentRecord): Promise<IssuedCredentials | null> {
  if (ctx.issuer === null) return null;
  const id = record.passport.agent_id ?? '';
  if (record.publicKey === null) {
    throw new AccessDeniedError(
      `agent ${repr(record.passport.name)} was registered without a public key and cannot get credentials: unregister it and register again`,
    );
  }
  const state = record.credentials ?? NO_CREDENTIALS;
  if (state.revoked_at !== null) throw refusedAdmission(record.passport.name);
  const current = state.current;
  if (current !== null && stillFresh(current, Date.now())) {
    return {
      jwt: current.jwt,
      expires_at: new Date(current.expires_at * 1000).toISOString(),
      inbox_prefix: identityInboxPrefix(id),
    };
  }
  const minted = await ctx.issuer.issue(id, record.publicKey, state.not_before);
  const next: StoredCredentials = {
    current: { jwt: minted.credentials.jwt, issued_at: minted.issuedAt, expires_at: minted.expiresAt },
    previous_issued_at: current?.issued_at ?? null,
    not_before: minted.issuedAt,
    revoked_at: null,
  };
  await ctx.registry.setCredentials(id, next);
  ctx.logger.info(
    { agent: record.passport.name, agentId: id, expiresAt: minted.credentials.expires_at },
    'credentials issued',
  );
  return minted.credentials;
}
