import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node';
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

/** Options of `connectWithCreds`. */
export interface CredsConnectOptions {
  readonly url: string;
  /** The text of a `.creds` file (user JWT and seed). */
  readonly creds: string;
  /** The connection's reply-inbox prefix; it must match the user's subscribe permissions. */
  readonly inboxPrefix?: string;
  /** Connection name shown by the server. */
  readonly name?: string;
}

/**
 * Connects with `.creds` text, without reconnecting (a refused or closed connection stays closed, so a test sees
 * it at once).
 */
export async function connectWithCreds(options: CredsConnectOptions): Promise<NatsConnection> {
  return connect({
    servers: options.url,
    authenticator: credsAuthenticator(new TextEncoder().encode(options.creds)),
    maxReconnectAttempts: 0,
    noAsyncTraces: true,
    ...(options.inboxPrefix === undefined ? {} : { inboxPrefix: options.inboxPrefix }),
    ...(options.name === undefined ? {} : { name: options.name }),
  });
}
