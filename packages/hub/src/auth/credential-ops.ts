import {
  AccessDeniedError,
  AuthError,
  InvalidRequestError,
  NotFoundError,
  repr,
  type IssuedCredentials,
} from '@ag2net/protocol';
import type { HubRequestParsed } from '@ag2net/protocol/internal';
import { REGISTRY_KEY, admit, issueFor, type Registered } from '../core/agent-ops.js';
import type { HubContext } from '../core/context.js';
import type { AgentRecord } from '../core/registry.js';

/** Why `attach` and `renewCredentials` are refused by a hub that issues no credentials. */
const NO_ISSUER = 'this hub issues no credentials (its NATS has no per-identity auth): connect without credentials';

/**
 * Fresh credentials for an identity registered earlier (its JWT lapsed, or a new process takes it over): the
 * identity is found by name or id (`not_found` otherwise, before any admission check, as AG2's hello does), admitted
 * again by the hub's authenticator under its registered name, and `public_key` must be the key it registered with
 * (`auth_failed` otherwise). The JWT is only of use to the holder of that key's seed.
 */
export async function attach(ctx: HubContext, req: HubRequestParsed<'attach'>): Promise<Registered> {
  if (ctx.issuer === null) throw new InvalidRequestError(NO_ISSUER);
  const found = ctx.registry.lookup(req.name_or_id);
  if (found === undefined) throw new NotFoundError(`agent not found: ${req.name_or_id}`);
  await admit(ctx, found.passport.name, { auth: req.auth, kind: found.passport.kind });
  // Ordered with unregister: an identity removed while it was being admitted gets nothing.
  return ctx.serial.run(REGISTRY_KEY, async () => {
    const record = ctx.registry.get(found.passport.agent_id ?? '');
    if (record === undefined) throw new NotFoundError(`agent not found: ${req.name_or_id}`);
    if (record.publicKey !== null && record.publicKey !== req.public_key) {
      throw new AuthError(`public_key does not match the key ${repr(record.passport.name)} registered with`);
    }
    return { passport: record.passport, credentials: await issued(ctx, record) };
  });
}

/**
 * A new JWT, with a new lifetime, for the caller's registered key. Refused once the identity is unregistered
 * (`access_denied`): its last JWT then lapses at its `expires_at` and is never renewed.
 */
export async function renewCredentials(ctx: HubContext, caller: string): Promise<IssuedCredentials> {
  if (ctx.issuer === null) throw new InvalidRequestError(NO_ISSUER);
  return ctx.serial.run(REGISTRY_KEY, async () => {
    const record = ctx.registry.get(caller);
    if (record === undefined) throw new AccessDeniedError(`unknown caller: ${repr(caller)}`);
    return issued(ctx, record);
  });
}

async function issued(ctx: HubContext, record: AgentRecord): Promise<IssuedCredentials> {
  const credentials = await issueFor(ctx, record);
  // issueFor answers null only without an issuer, which both callers refused already.
  if (credentials === null) throw new InvalidRequestError(NO_ISSUER);
  return credentials;
}
