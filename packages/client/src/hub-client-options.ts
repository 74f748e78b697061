import type { PassportInput, ResumeInput, RuleInput } from '@ag2net/protocol';
import type { NatsConnection } from '@nats-io/transport-node';
import { loadCreds, type UserCredentials } from './credentials.js';
import type { Logger } from './logger.js';

/** Options of `HubClient.connect`. */
export interface HubClientOptions {
  /** NATS server URL(s); ignored when `connection` is given. Default `nats://127.0.0.1:4222`. */
  readonly servers?: string | string[];
  /** An existing NATS connection (the client does not close it). Participants it registers share it. */
  readonly connection?: NatsConnection;
  /**
   * The connection's credentials: the text of a `.creds` file or its path (the registrant's, an operator's or an
   * identity's). The reply-inbox prefix then comes from the JWT's own subscribe permission.
   */
  readonly creds?: string;
  /** A user JWT, with `seed`: the same as `creds` without a file. */
  readonly jwt?: string;
  /** The nkey seed (`SU…`) of the user `jwt` was issued for. */
  readonly seed?: string;
  /** Calls as the deployment's operator: `$operator` is the default caller of channel reads. Default false. */
  readonly operator?: boolean;
  /** The hub's prefix; default `ag2`. */
  readonly prefix?: string;
  /** How long to keep retrying when no hub answers, in ms; default 30 000. */
  readonly retryForMs?: number;
  /**
   * How long one attempt of a request waits for its reply unless the call says otherwise, in ms; default 3 000 for
   * a post and 10 000 for the others (`defaultAttemptTimeoutMs`).
   */
  readonly requestTimeoutMs?: number;
  /**
   * How many partitions the deployment spreads its channels over (`Health.partitions`), an integer from 1 to
   * `MAX_PARTITIONS`, when known up front. Default: asked of the hub with `health`, once per connection and identity,
   * before the first operation about channels.
   */
  readonly partitions?: number;
  /** pino-compatible logger; default silent. */
  readonly logger?: Logger;
}

/** Options of `register`, `registerHuman`, `attach` and `attachHuman`. */
export interface RegisterOptions {
  readonly resume?: ResumeInput;
  /** The agent's SKILL.md. */
  readonly skillMd?: string | null;
  readonly rule?: RuleInput | null;
  /**
   * Where the identity's credentials (the JWT the hub issued and the identity's seed) are kept as a `.creds` file
   * (mode 0600), rewritten at every renewal; `attach` reconnects with them. Only a hub that issues credentials
   * writes it. Default: not persisted (the identity cannot be attached again after this process ends).
   */
  readonly credsPath?: string;
}

/** Options of `attach` and `attachHuman`: a passport registers the name when it is not registered yet. */
export interface AttachOptions extends RegisterOptions {
  readonly passport?: PassportInput;
}

/** The credentials `HubClient.connect` was given, or `null`. */
export async function credentialsOf(options: HubClientOptions): Promise<UserCredentials | null> {
  if (options.creds !== undefined) return loadCreds(options.creds);
  if (options.jwt === undefined && options.seed === undefined) return null;
  if (options.jwt === undefined || options.seed === undefined) {
    throw new TypeError('HubClient.connect: jwt and seed go together');
  }
  return { jwt: options.jwt, seed: options.seed };
}
