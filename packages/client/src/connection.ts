import { connect, jwtAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { DEFAULT_INBOX_PREFIX, inboxPrefixOf, type UserCredentials } from './credentials.js';

/**
 * The credentials a connection authenticates with, replaceable while it lives: the connection asks for them each
 * time it (re)connects, so renewed credentials are used from the next reconnect on (nats-server closes a connection
 * when its JWT expires; the client then reconnects with the renewed one).
 */
export class CredentialSource {
  #current: UserCredentials;

  constructor(credentials: UserCredentials) {
    this.#current = credentials;
  }

  get current(): UserCredentials {
    return this.#current;
  }

  /** Replaces the JWT (the seed of an identity never changes). */
  update(credentials: UserCredentials): void {
    this.#current = credentials;
  }
}

/** Options of `openConnection`. */
export interface OpenConnectionOptions {
  readonly servers: string | readonly string[];
  /** The credentials; `null` connects without any. */
  readonly source: CredentialSource | null;
  /** The reply-inbox prefix; default the one the credentials' JWT allows (`inboxPrefixOf`), or `_INBOX`. */
  readonly inboxPrefix?: string;
  /** The connection's name as the server shows it. */
  readonly name?: string;
}

/** Opens a NATS connection that reconnects for ever, authenticating with the source's current credentials. */
export function openConnection(options: OpenConnectionOptions): Promise<NatsConnection> {
  const source = options.source;
  const servers = typeof options.servers === 'string' ? options.servers : [...options.servers];
  if (source === null) {
    return connect({
      servers,
      maxReconnectAttempts: -1,
      inboxPrefix: options.inboxPrefix ?? DEFAULT_INBOX_PREFIX,
      ...(options.name === undefined ? {} : { name: options.name }),
    });
  }
  return connect({
    servers,
    maxReconnectAttempts: -1,
    authenticator: jwtAuthenticator(
      () => source.current.jwt,
      () => new TextEncoder().encode(source.current.seed.trim()),
    ),
    inboxPrefix: options.inboxPrefix ?? inboxPrefixOf(source.current.jwt),
    ...(options.name === undefined ? {} : { name: options.name }),
  });
}

/** The URL of the server `nc` is connected to, for opening further connections to the same deployment. */
export function serverOf(nc: NatsConnection): string {
  const server = nc.getServer();
  return server.includes('://') ? server : `nats://${server}`;
}
