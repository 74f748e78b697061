import { ErrorReason, NotFoundError, ProtocolError, type Passport, type PassportInput } from '@ag2net/protocol';
import { errors } from '@nats-io/transport-node';
import { publicKeyOf, type UserCredentials } from './credentials.js';
import type { AttachOptions, RegisterOptions } from './hub-client-options.js';
import type { HubReads } from './hub-reads.js';
import {
  IdentityCredentialsError,
  issuedIdentity,
  usableCredentials,
  waitForPersisted,
  type IdentityCredentials,
  type IdentityGrant,
} from './identity.js';
import type { Logger } from './logger.js';

/** A hub client bound to one identity, as attaching uses it. */
export interface BoundHub {
  getAgent(nameOrId: string): Promise<Passport>;
  close(): Promise<void>;
}

/** A registered identity and the hub client bound to it. */
export interface Grant<THub extends BoundHub> {
  readonly passport: Passport;
  readonly hub: THub;
}

/** What attaching to an identity needs of the hub client that does it. */
export interface AttachHost<THub extends BoundHub> extends Pick<HubReads, 'call' | 'findAgentId'> {
  /** Whether the deployment is secured (identities run on their own credentials). */
  readonly secured: boolean;
  readonly logger: Logger;
  /** A hub client bound to `identity`: over its own connection when it has credentials. */
  bind(identity: IdentityGrant): Promise<Grant<THub>>;
  /** Opens the identity's own connection with its credentials, kept renewed while its client lives. */
  openIdentity(agentId: string, name: string, credentials: IdentityCredentials): Promise<THub>;
  /** Registers a new identity (the `register` operation) and binds a hub client to it. */
  registerIdentity(passport: PassportInput, options: RegisterOptions): Promise<Grant<THub>>;
}

/** How `attachIdentity` looks for the identity: a person's or an agent's, and whether a registration race was lost. */
export interface AttachHow {
  readonly human: boolean;
  readonly raced: boolean;
}

/**
 * The identity registered earlier under `name`, bound to a hub client: from its persisted credentials
 * (`options.credsPath`) when there are some; on an unsecured deployment by name; else registered with
 * `options.passport` (a person needs none). A registration that loses a race for the name attaches to the winner's
 * identity (on a secured deployment with the credentials it persisted at the shared `credsPath`).
 */
export async function attachIdentity<THub extends BoundHub>(
  host: AttachHost<THub>,
  name: string,
  request: { readonly options: AttachOptions; readonly how: AttachHow },
): Promise<Grant<THub>> {
  const { options, how } = request;
  const credsPath = options.credsPath;
  const persisted = credsPath === undefined ? null : await waitForPersisted(credsPath, how.raced);
  if (persisted !== null && credsPath !== undefined) {
    const grant = await attachPersisted(host, name, { persisted, credsPath, auth: options.passport?.auth });
    if (grant !== null) return grant;
    // The identity was unregistered since: its name is free again.
    host.logger.warn({ agent: name, credsPath }, 'persisted credentials of an unregistered identity; registering');
  }
  if (!host.secured) {
    const id = await host.findAgentId(name);
    if (id !== null) {
      const { passport } = await host.call('getAgent', { name_or_id: id });
      return host.bind({ passport, credentials: null });
    }
  }
  // The name is new (or, secured, cannot be told without its credentials): register it. A person needs no passport.
  const given = options.passport ?? (how.human ? { name } : undefined);
  if (given === undefined) {
    throw new TypeError(
      host.secured
        ? `attach('${name}'): no credentials of '${name}' at ${credsPath ?? '(no credsPath)'}; a passport is required to register it`
        : `attach('${name}'): name is not registered; a passport is required to fall back to register()`,
    );
  }
  const passport = { ...given, name, ...(how.human ? { kind: 'human' as const } : {}) };
  try {
    return await host.registerIdentity(passport, options);
  } catch (err) {
    if (!(err instanceof ProtocolError) || err.details?.['reason'] !== ErrorReason.NameTaken) throw err;
    // Another replica registered the name between the lookup and the registration: attach to that identity (on a
    // secured deployment, with the credentials that replica persisted at the shared `credsPath`).
    if (how.raced || (host.secured && credsPath === undefined)) {
      throw new IdentityCredentialsError(
        `attach('${name}'): '${name}' is registered; attaching to it needs its own credentials (credsPath)`,
        { cause: err },
      );
    }
    return attachIdentity(host, name, { options, how: { ...how, raced: true } });
  }
}

/**
 * The identity of persisted credentials: over its own connection at once while they are valid, else with fresh ones
 * the `attach` operation issues for the registered key (only the holder of its seed can use them). `null` when the
 * hub no longer knows the identity (unregistered).
 */
async function attachPersisted<THub extends BoundHub>(
  host: AttachHost<THub>,
  name: string,
  from: { persisted: UserCredentials; credsPath: string; auth: PassportInput['auth'] },
): Promise<Grant<THub> | null> {
  const usable = usableCredentials(from.persisted, from.credsPath);
  try {
    if (usable !== null) {
      try {
        return await bindPersisted(host, name, usable);
      } catch (err) {
        if (!(err instanceof errors.AuthorizationError || err instanceof errors.UserAuthenticationExpiredError)) {
          throw err;
        }
        // Unexpired but refused: revoked, or issued into an account the deployment no longer admits identities to
        // (an upgraded layout). The registered key asks the hub for fresh ones, as for expired credentials.
        host.logger.warn({ agent: name, credsPath: from.credsPath }, 'persisted credentials refused; attaching');
      }
    }
    const reply = await host.call('attach', {
      name_or_id: name,
      public_key: publicKeyOf(from.persisted.seed),
      ...(from.auth === undefined ? {} : { auth: from.auth }),
    });
    return await host.bind(await issuedIdentity(reply, { seed: from.persisted.seed, credsPath: from.credsPath }));
  } catch (err) {
    if (err instanceof NotFoundError) return null;
    throw err;
  }
}

/** Binds persisted credentials that are still valid: the passport is read over the identity's own connection. */
async function bindPersisted<THub extends BoundHub>(
  host: AttachHost<THub>,
  name: string,
  usable: { agentId: string; credentials: IdentityCredentials },
): Promise<Grant<THub>> {
  const hub = await host.openIdentity(usable.agentId, name, usable.credentials);
  try {
    const passport = await hub.getAgent(usable.agentId);
    if (passport.name !== name) {
      throw new IdentityCredentialsError(
        `${usable.credentials.credsPath ?? 'the credentials'} belong to '${passport.name}', not '${name}'`,
      );
    }
    return { passport, hub };
  } catch (err) {
    await hub.close();
    throw err;
  }
}
