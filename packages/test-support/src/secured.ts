import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { startNatsCluster, type NatsCluster } from './cluster.js';
import { startNatsServer, type NatsServer, type NatsServerOptions } from './server.js';

/** Options of `startSecuredNatsServer`. */
export interface SecuredNatsServerOptions extends NatsServerOptions {
  /** A directory laid out by `auth init` (`@ag2net/auth`): its `auth.conf` secures the server. */
  readonly authDir: string;
}

/**
 * Starts a real nats-server in operator mode on random ports, trusting the operator, accounts and users of an
 * `auth init` directory. The directory's `auth.conf` inlines every JWT, so its text goes into the generated config
 * as is; a connection without credentials is refused. `restart()` keeps the auth.
 */
export async function startSecuredNatsServer(options: SecuredNatsServerOptions): Promise<NatsServer> {
  const authConf = await readFile(join(options.authDir, 'auth.conf'), 'utf8');
  return startNatsServer({ ...options, extraConfig: `${authConf}\n${options.extraConfig ?? ''}` });
}

/**
 * Starts an `n`-node (default 3) JetStream cluster in operator mode, every node trusting the accounts of an
 * `auth init` directory; its readiness probes connect with the directory's `admin.creds` (a user of the account that
 * has JetStream).
 */
export async function startSecuredNatsCluster(options: {
  readonly authDir: string;
  readonly n?: number;
}): Promise<NatsCluster> {
  const authConf = await readFile(join(options.authDir, 'auth.conf'), 'utf8');
  const admin = await readFile(join(options.authDir, 'admin.creds'));
  return startNatsCluster(options.n ?? 3, { extraConfig: authConf, authenticator: credsAuthenticator(admin) });
}

/** Options of `connectWithCreds`. */
export interface CredsConnectOptions {
  readonly url: string;
  /** The text of a `.creds` file (user JWT and seed). */
  readonly creds: string;
  /** The connection's reply-inbox prefix; it must match the user's subscribe permissions. */
  readonly inboxPrefix?: string;
  /** Connection name shown by the server. */
  readonly name?: string;
  /** Every node of a cluster, instead of `url`'s one; the connection then reconnects to the others. */
  readonly urls?: readonly string[];
}

/**
 * Connects with `.creds` text, without reconnecting (a refused or closed connection stays closed, so a test sees
 * it at once).
 */
export async function connectWithCreds(options: CredsConnectOptions): Promise<NatsConnection> {
  return connect({
    servers: options.urls === undefined ? options.url : [...options.urls],
    authenticator: credsAuthenticator(new TextEncoder().encode(options.creds)),
    maxReconnectAttempts: options.urls === undefined ? 0 : -1,
    noAsyncTraces: true,
    ...(options.inboxPrefix === undefined ? {} : { inboxPrefix: options.inboxPrefix }),
    ...(options.name === undefined ? {} : { name: options.name }),
  });
}
