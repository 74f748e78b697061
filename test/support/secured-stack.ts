/**
 * A secured stack for tests: `authInit` in a temporary directory, a real nats-server in operator mode trusting it,
 * and an in-process hub connected as the hub-service user that issues identity credentials with the hub account's
 * signing key. Identities then register with their own public keys and connect with the JWT the hub answers.
 *
 * @example
 * ```ts
 * const stack = await startSecuredStack({ apiKeys: { alice: 'k-alice' } });
 * try {
 *   const registrant = await connectWithCreds({ url: stack.url, creds: stack.registrantCreds,
 *     inboxPrefix: registrantInboxPrefix(stack.names) });
 *   // … register with `public_key`, connect with credsFile(credentials.jwt, seed) …
 * } finally {
 *   await stack.stop();
 * }
 * ```
 */
import { AuthFile, authInit, hubServiceInboxPrefix, type AuthLayout } from '@ag2net/auth';
import { apiKeyAuthenticator, openRegistration, startHub, type Hub, type HubOptions } from '@ag2net/hub';
import { hubNames, type HubNames } from '@ag2net/protocol';
import { connectWithCreds, startSecuredNatsServer, uniqueName, type NatsServer } from '@ag2net/test-support';
import type { NatsConnection } from '@nats-io/transport-node';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Options of `startSecuredStack`. */
export interface SecuredStackOptions {
  /** The hub's prefix; default a fresh unique one. */
  readonly prefix?: string;
  /** API keys by identity name: registration then needs `auth: { scheme: 'api_key', claim: { token } }`. */
  readonly apiKeys?: Readonly<Record<string, string>>;
  /** Anyone may register (scheme `none`). Ignored when `apiKeys` is given. Default: neither, nobody may register. */
  readonly openRegistration?: boolean;
  /** Lifetime of the credentials the hub issues, in seconds; default the hub's (3 600). */
  readonly credentialsTtlSeconds?: number;
  /** More options of the hub (and of every hub `startHub` starts): lease, clock, sweeper, … */
  readonly hub?: HubOptions;
}

/** A running secured stack. The `…Creds` fields are `.creds` texts; `paths` says where their files are. */
export interface SecuredStack {
  readonly url: string;
  /** The auth directory `authInit` laid out (operator, accounts, signing keys, user creds, server config). */
  readonly authDir: string;
  readonly auth: AuthLayout;
  readonly prefix: string;
  readonly names: HubNames;
  /** May call `register` and `health` only; connect with inbox prefix `registrantInboxPrefix(names)`. */
  readonly registrantCreds: string;
  /** The operator of the data account: reads everything, calls as `$operator`; default inbox prefix. */
  readonly adminCreds: string;
  /** The operator caller of the identity account (the bridge's): calls as `$operator` through the hub's operations. */
  readonly operatorCallerCreds: string;
  /** The hub's user; connect with inbox prefix `hubServiceInboxPrefix(names)`. */
  readonly hubServiceCreds: string;
  readonly paths: {
    readonly registrantCreds: string;
    readonly adminCreds: string;
    readonly operatorCallerCreds: string;
    readonly hubServiceCreds: string;
  };
  /** The identity account's public key and signing seed: what the hubs issue with (`HubOptions.credentials`). */
  readonly issuer: { readonly accountPublicKey: string; readonly signingSeed: string };
  /** The first hub, active when `startSecuredStack` resolves. */
  readonly hub: Hub;
  readonly server: NatsServer;
  /**
   * Starts another hub on the same prefix, on its own hub-service connection, with the stack's issuer and admission
   * (a standby unless told `awaitActive`; `extra` overrides options). Stopped by `stop()`.
   */
  startHub(extra?: HubOptions): Promise<Hub>;
  /** Closes every hub and connection it started, stops the server and removes the directory. Idempotent. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Starts a secured nats-server and a hub on it that issues credentials; see `SecuredStack`. */
export async function startSecuredStack(options: SecuredStackOptions = {}): Promise<SecuredStack> {
  const root = await mkdtemp(join(tmpdir(), 'ag2net-secured-'));
  const prefix = options.prefix ?? uniqueName('sec');
  const names = hubNames(prefix);
  const hubs: Hub[] = [];
  const connections: NatsConnection[] = [];
  let server: NatsServer | null = null;
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    for (const hub of hubs.splice(0).reverse()) await hub.close();
    for (const nc of connections.splice(0)) if (!nc.isClosed()) await nc.close();
    await server?.stop();
    await rm(root, { recursive: true, force: true });
  };
  try {
    const authDir = join(root, 'auth');
    const auth = await authInit({ dir: authDir, prefix, storeDir: join(root, 'jetstream') });
    const running = await startSecuredNatsServer({ authDir });
    server = running;
    const paths = {
      registrantCreds: auth.path(AuthFile.registrantCreds),
      adminCreds: auth.path(AuthFile.adminCreds),
      operatorCallerCreds: auth.path(AuthFile.operatorCallerCreds),
      hubServiceCreds: auth.path(AuthFile.hubServiceCreds),
    };
    const hubServiceCreds = await readFile(paths.hubServiceCreds, 'utf8');
    const issuer = {
      accountPublicKey: auth.manifest.identity_account.public_key,
      signingSeed: (await readFile(auth.path(AuthFile.identityAccountSigningSeed), 'utf8')).trim(),
    };
    const authenticator =
      options.apiKeys !== undefined
        ? apiKeyAuthenticator({ keys: options.apiKeys })
        : options.openRegistration === true
          ? openRegistration()
          : undefined;
    const startOne = async (extra: HubOptions): Promise<Hub> => {
      const nc = await connectWithCreds({
        url: running.url,
        creds: hubServiceCreds,
        inboxPrefix: hubServiceInboxPrefix(names),
        name: 'hub-service',
      });
      connections.push(nc);
      const hub = await startHub({
        connection: nc,
        prefix,
        credentials: {
          ...issuer,
          ...(options.credentialsTtlSeconds === undefined ? {} : { ttlSeconds: options.credentialsTtlSeconds }),
        },
        ...(authenticator === undefined ? {} : { authenticator }),
        ...options.hub,
        ...extra,
      });
      hubs.push(hub);
      return hub;
    };
    // Active once startHub resolves, and the server already has its RPC subscriptions (the hub flushed them).
    const hub = await startOne({ awaitActive: true });
    const stack: SecuredStack = {
      url: running.url,
      authDir,
      auth,
      prefix,
      names,
      registrantCreds: await readFile(paths.registrantCreds, 'utf8'),
      adminCreds: await readFile(paths.adminCreds, 'utf8'),
      operatorCallerCreds: await readFile(paths.operatorCallerCreds, 'utf8'),
      hubServiceCreds,
      paths,
      issuer,
      hub,
      server: running,
      startHub: (extra = {}) => startOne({ awaitActive: false, ...extra }),
      stop,
      [Symbol.asyncDispose]: stop,
    };
    return stack;
  } catch (err) {
    await stop();
    throw err;
  }
}
