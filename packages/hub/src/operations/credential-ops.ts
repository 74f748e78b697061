import {
  AccessDeniedError,
  AuditKind,
  AuthError,
  InvalidRequestError,
  NotFoundError,
  type HubResponse,
  type IssuedCredentials,
} from '@ag2net/protocol';
import { type HubRequestParsed, repr } from '@ag2net/protocol/internal';
import { REGISTRY_KEY, admit, type Registered } from './agent-ops.js';
import { issueFor, type IssueDeps } from './issuance.js';
import { NO_CREDENTIALS } from '../auth/credential-state.js';
import type { AgentRecord } from '../stores/registry.js';
import type { HomeStores, HubEnv } from '../partition/hub-parts.js';
import type { PartitionPick } from '../partition/partition.js';

/** What issuing credentials to a registered identity uses. */
export type CredentialDeps = IssueDeps & PartitionPick<'serial'>;

/** What revoking or re-admitting an identity uses. */
export type RevocationDeps = Pick<HubEnv, 'logger'> & Pick<HomeStores, 'registry' | 'audit'> & PartitionPick<'serial'>;

/** Why `attach` and `renewCredentials` are refused by a hub that issues no credentials. */
const NO_ISSUER = 'this hub issues no credentials (its NATS has no per-identity auth): connect without credentials';

/**
 * Fresh credentials for an identity registered earlier (its JWT lapsed, or a new process takes it over). The
 * admission credential is checked first, under the name asked for, so a refusal says nothing about whether that name
 * is registered: an unknown name and a wrong key get the same `auth_failed`. Then the identity is found by name or id
 * (`not_found`, for a party the authenticator admitted), and `public_key` must be the key it registered with
 * (`auth_failed` otherwise). The JWT is only of use to the holder of that key's seed.
 */
export async function attach(
  ctx: CredentialDeps & Pick<HomeStores, 'authenticator'>,
  req: HubRequestParsed<'attach'>,
): Promise<Registered> {
  if (ctx.issuer === null) throw new InvalidRequestError(NO_ISSUER);
  const found = ctx.registry.lookup(req.name_or_id);
  const name = found?.passport.name ?? req.name_or_id;
  await admit(ctx, name, { auth: req.auth, kind: found?.passport.kind ?? null });
  // Ordered with unregister: an identity removed while it was being admitted gets nothing.
  return ctx.partition.serial.run(REGISTRY_KEY, async () => {
    const record = found === undefined ? undefined : ctx.registry.get(found.passport.agent_id ?? '');
    if (record === undefined) throw new NotFoundError(`agent not found: ${req.name_or_id}`);
    if (record.publicKey !== null && record.publicKey !== req.public_key) {
      throw new AuthError(`public_key does not match the key ${repr(record.passport.name)} registered with`);
    }
    return { passport: record.passport, credentials: await issued(ctx, record) };
  });
}

/**
 * The caller's credentials: its newest JWT again while that has more than half of its lifetime ahead, else a new
 * one with a new lifetime, which retires all but the one it replaces (`StoredCredentials`). Refused once the
 * identity is unregistered or revoked (`access_denied`): its last JWT then lapses at its `expires_at`.
 */
export async function renewCredentials(ctx: CredentialDeps, caller: string): Promise<IssuedCredentials> {
  if (ctx.issuer === null) throw new InvalidRequestError(NO_ISSUER);
  return ctx.partition.serial.run(REGISTRY_KEY, async () => {
    const record = ctx.registry.get(caller);
    if (record === undefined || record.credentials?.revoked_at != null) {
      throw new AccessDeniedError(`unknown caller ${repr(caller)}`);
    }
    return issued(ctx, record);
  });
}

/**
 * The operator revokes an identity (`revokeIdentity`): it is refused every call and every credential until
 * `readmitIdentity`. `revoked_at` is this process's wall-clock time, which the operator's tools date the revocation
 * of the identity's key in the account with, so that credentials issued after a re-admission postdate it.
 */
export async function revokeIdentity(ctx: RevocationDeps, nameOrId: string): Promise<HubResponse<'revokeIdentity'>> {
  return ctx.partition.serial.run(REGISTRY_KEY, async () => {
    const record = requireIdentity(ctx, nameOrId);
    const id = record.passport.agent_id ?? '';
    const state = record.credentials ?? NO_CREDENTIALS;
    if (state.revoked_at !== null) return admissionReply(record, state.revoked_at);
    const revokedAt = new Date(Date.now()).toISOString();
    await ctx.registry.setCredentials(id, { ...state, revoked_at: revokedAt });
    ctx.logger.warn({ agent: record.passport.name, agentId: id }, 'identity revoked');
    await ctx.audit.recordAfter(
      AuditKind.AgentRevoked,
      { agent_id: id, name: record.passport.name },
      { id: `agent_revoked.${id}.${revokedAt}`, at: revokedAt },
    );
    return admissionReply(record, revokedAt);
  });
}

/**
 * The operator re-admits a revoked identity (`readmitIdentity`): no JWT it held before is honoured again; its next
 * `attach` gets one dated after the revocation.
 */
export async function readmitIdentity(ctx: RevocationDeps, nameOrId: string): Promise<HubResponse<'readmitIdentity'>> {
  return ctx.partition.serial.run(REGISTRY_KEY, async () => {
    const record = requireIdentity(ctx, nameOrId);
    const id = record.passport.agent_id ?? '';
    const state = record.credentials ?? NO_CREDENTIALS;
    if (state.revoked_at === null) return admissionReply(record, null);
    const revokedSeconds = Math.floor(Date.parse(state.revoked_at) / 1000);
    await ctx.registry.setCredentials(id, {
      current: null,
      previous_issued_at: null,
      not_before: Math.max(state.not_before, revokedSeconds + 1),
      revoked_at: null,
    });
    ctx.logger.info({ agent: record.passport.name, agentId: id }, 'identity re-admitted');
    await ctx.audit.recordAfter(
      AuditKind.AgentReadmitted,
      { agent_id: id, name: record.passport.name },
      { id: `agent_readmitted.${id}.${state.revoked_at}` },
    );
    return admissionReply(record, null);
  });
}

function requireIdentity(ctx: Pick<HomeStores, 'registry'>, nameOrId: string): AgentRecord {
  const record = ctx.registry.lookup(nameOrId);
  if (record === undefined) throw new NotFoundError(`agent not found: ${nameOrId}`);
  return record;
}

function admissionReply(record: AgentRecord, revokedAt: string | null): HubResponse<'revokeIdentity'> {
  return {
    agent_id: record.passport.agent_id ?? '',
    name: record.passport.name,
    public_key: record.publicKey,
    revoked_at: revokedAt,
  };
}

async function issued(ctx: IssueDeps, record: AgentRecord): Promise<IssuedCredentials> {
  const credentials = await issueFor(ctx, record);
  // issueFor answers null only without an issuer, which both callers refused already.
  if (credentials === null) throw new InvalidRequestError(NO_ISSUER);
  return credentials;
}
