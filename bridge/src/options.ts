import type { Logger } from '@ag2net/client';
import type { BridgeObserver } from './metrics.js';

/** Options of `startBridge`. Every field is optional; `withDefaults` fills them. */
export interface BridgeOptions {
  /** NATS server URL(s). Default `nats://127.0.0.1:4222`. */
  readonly servers?: string;
  /** The hub's prefix. Default `ag2`. */
  readonly prefix?: string;
  /** Interface to listen on. Default `127.0.0.1`. */
  readonly host?: string;
  /** Port to listen on; 0 picks a free one. Default 8787. */
  readonly port?: number;
  /**
   * The registrant's credentials (`.creds` text or path) of a secured deployment: people are registered and attached
   * with them and then act over their own. Unset: an unsecured deployment (no credentials anywhere).
   */
  readonly registrantCreds?: string;
  /**
   * The operator caller's credentials (`operator-caller.creds` of the identity account), `.creds` text or path:
   * operators act with them as `$operator`, through the hub's operations only. The bridge holds no credential of the
   * account that keeps the data.
   */
  readonly operatorCreds?: string;
  /** People's API keys by name: sign-in and the hub's admission of each person. Default none. */
  readonly apiKeys?: Readonly<Record<string, string>>;
  /**
   * The secret every replica shares: signs tokens and derives each person's nkey. Required on a secured deployment;
   * default a random one (tokens then work on this process only).
   */
  readonly secret?: Uint8Array;
  /** The operator's sign-in key (name `$operator`); unset: nobody signs in as the operator. */
  readonly operatorKey?: string;
  /** Public hub reads (agents, health) without a token. Default false. */
  readonly anonymousRead?: boolean;
  /** Lifetime of a bearer token, in seconds. Default 3 600. */
  readonly tokenTtlSeconds?: number;
  /** A person's identity connection unused this long is closed, in ms. Default 300 000. */
  readonly idleMs?: number;
  /**
   * Requests a minute per person, on average, whatever tokens they use (the operator's sessions count as one person;
   * requests without a valid token count per client address, an IPv6 address by its /64). Default 600.
   */
  readonly ratePerMinute?: number;
  /** Requests a person (or an address) may make at once before the rate applies. Default 120. */
  readonly rateBurst?: number;
  /**
   * Sign-ins (`POST /v1/session`, refused or not) a minute per person name and per client address, on average: a
   * sign-in needs both to have one left. Default 10.
   */
  readonly signInPerMinute?: number;
  /** Sign-ins a name (or an address) may make at once before `signInPerMinute` applies. Default 20. */
  readonly signInBurst?: number;
  /** Largest request body, in bytes. Default 262 144. */
  readonly maxBodyBytes?: number;
  /** How often a live stream reads the log for more when no delivery wakes it, in ms. Default 500. */
  readonly pollMs?: number;
  /**
   * How long a request waits for a hub (retrying while none answers) before it answers `503 unavailable`, in ms.
   * Default 10 000.
   */
  readonly hubTimeoutMs?: number;
  /** pino-compatible logger. Default silent. */
  readonly logger?: Logger;
  /**
   * The built web console (`npm run build:console`): `index.html` and `assets/`, indexed once at startup. Default
   * `bridge/console-dist/`; when it does not exist, `GET /` answers 503 saying how to build it.
   */
  readonly consoleDir?: string | URL;
  /** Told of every answered request, rate-limited request and stream (`bridgeMetrics`). Default none. */
  readonly observer?: BridgeObserver;
}

export const DEFAULT_BRIDGE_PORT = 8787;

type Unset = 'registrantCreds' | 'operatorCreds' | 'operatorKey' | 'observer';
export type ResolvedBridgeOptions = Required<Omit<BridgeOptions, Unset>> & Pick<BridgeOptions, Unset>;
